/**
 * Every recorded provider stream through its real adapter (SDK + HTTP via the
 * mock LLM): outcome, text, thinking, tool calls, usage and replay state must
 * match what the fixture itself says (fixture-oracle.ts), and the event stream
 * must be one the run worker's strict ModelCycle accepts with the same outcome.
 */
import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { PROVIDER_FIXTURES_DIR } from "@byok/test-support/fixtures";
import { callThroughMock, cycleOutcome, FIXTURE_KINDS, modelRequest, testRoute, userText } from "../testing/call-kit.ts";
import { expectationFor } from "../testing/fixture-oracle.ts";

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

for (const kind of FIXTURE_KINDS) {
  const dir = `${PROVIDER_FIXTURES_DIR}/${kind}`;
  const files = readdirSync(dir).filter((f) => f.endsWith(".sse") || f.endsWith(".jsonl"));

  describe(`${kind} fixtures`, () => {
    it("has recordings to replay", () => {
      expect(files.length).toBeGreaterThan(3);
    });

    for (const name of files) {
      it(name, async () => {
        const file = `${dir}/${name}`;
        const expected = expectationFor(kind, file);
        const route = testRoute(kind, llm, { supportsThinking: true });
        const { events, summary, upstream } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hello")] }), { kind: "fixture", file });

        expect((upstream?.body as { model?: string } | undefined)?.model).toBe(route.upstreamModel);
        expect(summary.outcome).toBe(expected.outcome);
        expect(summary.thinking).toBe(expected.thinking);
        expect(summary.usage).toEqual(expected.usage);
        if (expected.outcome === "failed") {
          expect(summary.failure?.kind).toBe(expected.failureKind);
          expect(summary.failure?.partialText).toBe(expected.text);
          expect(summary.replay).toBeNull();
          expect(cycleOutcome(events)).toEqual({ kind: "failed", failure: expected.failureKind });
          return;
        }
        expect(summary.stopReason).toBe(expected.stopReason);
        expect(summary.text).toBe(expected.text);
        expect(summary.toolCalls.map((c) => ({ callId: c.callId, name: c.name, arguments: JSON.parse(c.argumentsJson) as unknown }))).toEqual(expected.toolCalls);
        expect(summary.replay?.providerKind).toBe(kind);
        expect(summary.replay?.routeId).toBe(route.id);
        expect(replayItems(kind, summary.replay?.data)).toEqual(expected.replayItems);
        expect(cycleOutcome(events)).toEqual({ kind: "completed" });
      });
    }
  });
}

/** The opaque items inside a replay state, in the oracle's terms. */
function replayItems(kind: string, data: unknown): unknown[] {
  const replay = data as { reasoning?: { text: string }; layout?: Array<{ kind: string; value?: unknown }> };
  if (kind === "openai-chat") return replay.reasoning === undefined ? [] : [replay.reasoning.text];
  return (replay.layout ?? []).filter((slot) => slot.kind === "opaque").map((slot) => slot.value);
}
