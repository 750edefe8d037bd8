/**
 * Tool sets through the real TOOL_SETS stream: a sender in one process stores a
 * set and sends its digest; a receiver on another connection, with an empty
 * cache, reads it back; the stream keeps one message per set without an age
 * limit and refuses new sets once full (the sender then keeps the tools inline).
 */
import { afterEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { DiscardPolicy, jetstreamManager } from "@nats-io/jetstream";
import { PromptSpecSchema, ToolDefinitionSchema, busNames } from "@byok/contracts";
import { createTestBus } from "@byok/test-support/infra";
import { silentLogger } from "./logger.ts";
import { connectNats } from "./nats.ts";
import { ensureRunStreams, TOOL_SETS_MAX_BYTES } from "./run-streams.ts";
import { natsToolSetStore, ToolSets } from "./tool-sets.ts";

const tools = Array.from({ length: 18 }, (_, i) =>
  create(ToolDefinitionSchema, { name: `tool_${i}`, description: `Tool number ${i}`, parametersJson: JSON.stringify({ type: "object", properties: { arg: { type: "string", description: "x".repeat(800) } } }) }),
);

describe("tool sets on the TOOL_SETS stream", () => {
  const bus = createTestBus();
  afterEach(() => bus.cleanup());

  it("is stored once and read back by another connection; the stream keeps one message per set, without an age limit", async () => {
    const names = busNames(bus.prefix);
    const a = await connectNats(bus.natsUrl, "sender", silentLogger());
    const b = await connectNats(bus.natsUrl, "receiver", silentLogger());
    try {
      await ensureRunStreams(a, names);
      const spec = create(PromptSpecSchema, { mode: "agent", systemText: "system", tools });
      const inline = spec.tools.length;
      const sender = new ToolSets(natsToolSetStore(a, names), silentLogger());
      const [wire, again] = await Promise.all([sender.forWire(spec), sender.forWire(spec)]);
      expect(wire.tools).toEqual([]);
      expect(again.toolsDigest).toEqual(wire.toolsDigest);

      const resolved = await new ToolSets(natsToolSetStore(b, names), silentLogger()).resolve(wire);
      expect(resolved.tools).toHaveLength(inline);
      expect(resolved.tools.map((t) => t.parametersJson)).toEqual(tools.map((t) => t.parametersJson));

      const jsm = await jetstreamManager(a);
      const info = await jsm.streams.info(names.toolSetsStream);
      expect(info.state.messages).toBe(1);
      expect(info.config).toMatchObject({ max_age: 0, max_msgs_per_subject: 1, max_bytes: TOOL_SETS_MAX_BYTES, discard: DiscardPolicy.New });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("keeps the tools inline when the stream is full, and a missing set is reported as unknown", async () => {
    const names = busNames(bus.prefix);
    const nc = await connectNats(bus.natsUrl, "sender", silentLogger());
    try {
      await ensureRunStreams(nc, names);
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(names.toolSetsStream);
      // A stream too small for any set: the server refuses the publish.
      await jsm.streams.update(names.toolSetsStream, { ...info.config, max_bytes: 256 });
      const spec = create(PromptSpecSchema, { mode: "agent", systemText: "system", tools });
      const wire = await new ToolSets(natsToolSetStore(nc, names), silentLogger()).forWire(spec);
      expect(wire.tools).toHaveLength(tools.length);
      expect(wire.toolsDigest).toHaveLength(0);

      const named = create(PromptSpecSchema, { mode: "agent", systemText: "system", toolsDigest: new Uint8Array(32).fill(7) });
      await expect(new ToolSets(natsToolSetStore(nc, names), silentLogger()).resolve(named)).rejects.toMatchObject({ kind: "unknown" });
    } finally {
      await nc.close();
    }
  });
});
