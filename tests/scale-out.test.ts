/**
 * Two run workers behind one adapter: concurrent conversations all complete,
 * and no run is executed twice (one run.begin per run in the store, one model
 * call per run at the LLM).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStatus } from "@byok/contracts";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const expected = readChatFixture(TEXT_FIXTURE);
const CONVERSATIONS = 10;

describe("scale-out", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway({ workers: 2 });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("ten concurrent conversations on two workers all complete, each run executed by exactly one worker", async () => {
    for (let i = 0; i < CONVERSATIONS; i++) gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const client = gw.client();
    const results = await Promise.all(
      Array.from({ length: CONVERSATIONS }, (_, i) => client.conversation().send(`question ${i}`, { modelId: gw.modelId }).finished),
    );

    for (const result of results) {
      expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
      expect(result.violations, result.describe()).toEqual([]);
      expect(result.text).toBe(expected.text);
    }
    // One model call per run and one delivery per run: no run was picked up by both workers.
    expect(gw.llm.requestsTo("openai-chat")).toHaveLength(CONVERSATIONS);
    const taken = gw.workers.map((w) => w.runsTaken());
    expect(taken.reduce((a, b) => a + b, 0)).toBe(CONVERSATIONS);
    // Both workers took part (neither hoards the queue).
    expect(taken.every((n) => n > 0), `runs taken per worker: ${taken.join(", ")}`).toBe(true);
    for (const result of results) {
      const run = await gw.endedRun(result.requestId);
      expect(run?.status).toBe(RunStatus.COMPLETED);
      // run.begin counts deliveries: a second worker executing the run would have begun it again.
      expect(run?.beginCount).toBe(1);
    }
  });
});
