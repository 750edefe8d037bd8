import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { toBinary } from "@bufbuild/protobuf";
import { PromptSpecSchema, ToolDefinitionSchema, ToolSetSchema, type PromptSpec } from "@byok/contracts";
import { silentLogger } from "./logger.ts";
import { ToolSetFailure, ToolSets, encodeToolSet, promptForWire, toolSetDigestHex, type ToolSetStore } from "./tool-sets.ts";

/** A store in memory that counts its calls and can refuse or fail. */
class MemoryStore implements ToolSetStore {
  readonly sets = new Map<string, Uint8Array>();
  puts = 0;
  gets = 0;
  refusePuts = false;
  failGets = false;

  async put(digestHex: string, encoded: Uint8Array): Promise<void> {
    this.puts += 1;
    if (this.refusePuts) throw new Error("maximum bytes exceeded");
    this.sets.set(digestHex, encoded);
  }

  async get(digestHex: string): Promise<Uint8Array | undefined> {
    this.gets += 1;
    if (this.failGets) throw new Error("no responders");
    return this.sets.get(digestHex);
  }
}

const tools = [
  create(ToolDefinitionSchema, { name: "Read", description: "Read a file", parametersJson: '{"type":"object","properties":{"path":{"type":"string"}}}' }),
  create(ToolDefinitionSchema, { name: "Shell", description: "Run a command", parametersJson: '{"type":"object","properties":{"command":{"type":"string"}}}' }),
];
const spec = (): PromptSpec => create(PromptSpecSchema, { mode: "agent", systemText: "You are a coding agent.", tools });

describe("ToolSets", () => {
  it("encodes a set exactly as the ToolSet message, also from cached tool encodings", () => {
    const expected = toBinary(ToolSetSchema, create(ToolSetSchema, { tools }));
    expect(encodeToolSet(tools)).toEqual(expected);
    expect(encodeToolSet([...tools])).toEqual(expected);
    expect(encodeToolSet([])).toEqual(toBinary(ToolSetSchema, create(ToolSetSchema)));
  });

  it("sends a stored set by digest, stores it once per process, and another process resolves the same tools from the store", async () => {
    const store = new MemoryStore();
    const sender = new ToolSets(store, silentLogger());
    const first = await sender.forWire(spec());
    const second = await sender.forWire(spec());
    expect(first.tools).toEqual([]);
    expect(first.toolsDigest).toHaveLength(32);
    expect(second.toolsDigest).toEqual(first.toolsDigest);
    expect(store.puts).toBe(1);
    expect([first.mode, first.systemText]).toEqual(["agent", "You are a coding agent."]);

    const receiver = new ToolSets(store, silentLogger());
    const resolved = await receiver.resolve(first);
    expect(resolved.tools.map((t) => [t.name, t.description, t.parametersJson])).toEqual(tools.map((t) => [t.name, t.description, t.parametersJson]));
    expect(resolved.toolsDigest).toEqual(first.toolsDigest);
    await receiver.resolve(first);
    expect(store.gets).toBe(1);
  });

  it("keeps the tools inline when the store refuses the set, and tries again on the next run", async () => {
    const store = new MemoryStore();
    store.refusePuts = true;
    const sender = new ToolSets(store, silentLogger());
    const refused = await sender.forWire(spec());
    expect(refused.tools).toHaveLength(2);
    expect(refused.toolsDigest).toHaveLength(0);
    store.refusePuts = false;
    expect((await sender.forWire(spec())).tools).toEqual([]);
    expect(store.puts).toBe(2);
  });

  it("passes specs with inline tools or without tools through unchanged", async () => {
    const store = new MemoryStore();
    const sets = new ToolSets(store, silentLogger());
    const none = create(PromptSpecSchema, { mode: "agent", systemText: "s" });
    expect(await sets.forWire(none)).toBe(none);
    const inline = spec();
    expect(await sets.resolve(inline)).toBe(inline);
    expect(store.puts + store.gets).toBe(0);
  });

  it("fails as unknown when the store has no such set, and as unreachable when it cannot be read", async () => {
    const store = new MemoryStore();
    const wire = await new ToolSets(store, silentLogger()).forWire(spec());
    store.sets.clear();
    const unknown = await new ToolSets(store, silentLogger()).resolve(wire).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ToolSetFailure);
    expect((unknown as ToolSetFailure).kind).toBe("unknown");
    store.failGets = true;
    const unreachable = await new ToolSets(store, silentLogger()).resolve(wire).catch((e: unknown) => e);
    expect((unreachable as ToolSetFailure).kind).toBe("unreachable");
  });

  it("refuses a stored set whose bytes do not match its digest", async () => {
    const store = new MemoryStore();
    const wire = await new ToolSets(store, silentLogger()).forWire(spec());
    const hex = toolSetDigestHex(wire.toolsDigest);
    store.sets.set(hex, store.sets.get(hex)!.subarray(1));
    const failure = await new ToolSets(store, silentLogger()).resolve(wire).catch((e: unknown) => e);
    expect((failure as ToolSetFailure).kind).toBe("unknown");
  });

  it("the wire form of a resolved spec leaves its tools out, one without a digest keeps them", async () => {
    const store = new MemoryStore();
    const wire = await new ToolSets(store, silentLogger()).forWire(spec());
    const resolved = await new ToolSets(store, silentLogger()).resolve(wire);
    expect(promptForWire(resolved)).toEqual(wire);
    const inline = spec();
    expect(promptForWire(inline)).toBe(inline);
  });
});
