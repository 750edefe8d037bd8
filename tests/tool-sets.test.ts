/**
 * A run's tool definitions cross the bus once per distinct set: the PreparedRun
 * and every ModelRequest name the set by digest (the TOOL_SETS stream holds
 * it), and the upstream request still carries every tool. The run worker and
 * the provider gateway start with empty caches: their first run reads the set
 * from the stream.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { ModelRequestSchema, PreparedRunSchema, type ModelRequest, type PreparedRun } from "@byok/contracts";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";
import { jetstreamManager } from "@nats-io/jetstream";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");

describe("tool sets by digest", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("sends the tools once: runs and model requests name them by digest, the upstream request has every tool", async () => {
    const runs: PreparedRun[] = [];
    const requests: ModelRequest[] = [];
    const runSub = gw.nc.subscribe(gw.names.runStart, { callback: (_err, msg) => void runs.push(fromBinary(PreparedRunSchema, msg.data)) });
    const callSub = gw.nc.subscribe(gw.names.providerInvoke, { callback: (_err, msg) => void requests.push(fromBinary(ModelRequestSchema, msg.data)) });
    await gw.nc.flush();
    try {
      const client = gw.client();
      for (let turn = 0; turn < 2; turn++) {
        gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
        const result = await client.conversation().send("Hello", { modelId: gw.modelId }).finished;
        expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
      }
    } finally {
      runSub.unsubscribe();
      callSub.unsubscribe();
    }

    expect(runs).toHaveLength(2);
    expect(requests).toHaveLength(2);
    const digest = runs[0]!.prompt!.toolsDigest;
    expect(digest).toHaveLength(32);
    for (const sent of [...runs.map((r) => r.prompt!), ...requests.map((r) => r.prompt!)]) {
      expect(sent.tools).toEqual([]);
      expect(sent.toolsDigest).toEqual(digest);
    }
    // The model still gets the whole set.
    const upstream = gw.llm.requests.map((r) => r.body as { tools?: Array<{ function: { name: string } }> });
    expect(upstream).toHaveLength(2);
    for (const body of upstream) expect(body.tools?.map((t) => t.function.name)).toContain("Shell");
    expect(upstream[1]!.tools).toEqual(upstream[0]!.tools);
    // One set stored, once.
    const jsm = await jetstreamManager(gw.nc);
    expect((await jsm.streams.info(gw.names.toolSetsStream)).state.messages).toBe(1);
  });
});
