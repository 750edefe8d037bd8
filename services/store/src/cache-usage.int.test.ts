/**
 * usage.cache against a real store: the prompt-cache report groups the
 * ledger's model calls per conversation (through their runs) and per model,
 * summing each token field over the calls that reported it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStatus, StoreErrorKind } from "@byok/contracts";
import { startTestStore, userText, type TestStore } from "./store-test-harness.ts";

interface Call {
  runId?: string;
  requestId?: string;
  modelId: string;
  usage: { inputTokens?: bigint; cacheReadTokens?: bigint; cacheWriteTokens?: bigint };
  startedAt: string;
}

describe("usage.cache", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  let tickets = 0;
  async function settle(memberId: string, call: Call): Promise<void> {
    tickets += 1;
    const callRef = call.runId !== undefined ? `run:${call.runId}:${tickets}` : `request:${call.requestId ?? ""}`;
    const settled = await store.call("settleCall", {
      ticketId: `00000000-0000-4000-8000-${String(tickets).padStart(12, "0")}`,
      entry: {
        callRef,
        memberId,
        clientKind: call.runId !== undefined ? "cursor" : "anthropic-api",
        modelId: call.modelId,
        providerId: "p",
        upstreamModel: "u",
        runId: call.runId ?? "",
        callIndex: call.runId !== undefined ? tickets : 0,
        requestId: call.requestId ?? "",
        usage: call.usage,
        startedAt: call.startedAt,
        outcome: "ok",
      },
    });
    expect(settled.error).toBeUndefined();
  }

  it("sums input and cached tokens per conversation and per model over the calls that reported them", async () => {
    for (const [runId, conversationId, modelId] of [["a1", "ca", "claude"], ["a2", "ca", "claude"], ["b1", "cb", "gpt"]] as const) {
      await store.call("beginRun", { runId, conversationId, memberId: "m1", modelId, initialMessages: [userText("q")] });
      await store.call("finishRun", { runId, status: RunStatus.COMPLETED });
    }
    // Run a1 made two calls (a tool round), a2 one; b1's endpoint reports no cache fields.
    await settle("m1", { runId: "a1", modelId: "claude", usage: { inputTokens: 600n, cacheReadTokens: 400n, cacheWriteTokens: 100n }, startedAt: "2026-03-01T10:00:00Z" });
    await settle("m1", { runId: "a1", modelId: "claude", usage: { inputTokens: 400n, cacheReadTokens: 400n }, startedAt: "2026-03-01T10:00:05Z" });
    await settle("m1", { runId: "a2", modelId: "claude", usage: { inputTokens: 1200n, cacheReadTokens: 1000n, cacheWriteTokens: 150n }, startedAt: "2026-03-01T11:00:00Z" });
    await settle("m1", { runId: "b1", modelId: "gpt", usage: { inputTokens: 400n }, startedAt: "2026-03-01T12:00:00Z" });
    // An HTTP front request of another member: a model row, no conversation.
    await settle("m2", { requestId: "req-1", modelId: "claude", usage: { inputTokens: 50n, cacheReadTokens: 0n }, startedAt: "2026-03-01T13:00:00Z" });

    const report = await store.call("cacheUsage", {});
    expect(report.error).toBeUndefined();
    // Newest conversation first.
    expect(report.conversations.map((c) => c.key)).toEqual(["cb", "ca"]);
    expect(report.conversations[1]).toMatchObject({ memberId: "m1", calls: 3, inputTokens: 2200n, inputTokensCalls: 3, cacheReadTokens: 1800n, cacheReadTokensCalls: 3, cacheWriteTokens: 250n, cacheWriteTokensCalls: 2 });
    const gpt = report.models.find((m) => m.key === "gpt");
    expect(gpt).toMatchObject({ calls: 1, inputTokens: 400n, inputTokensCalls: 1, cacheReadTokensCalls: 0 });
    expect(gpt?.cacheReadTokens).toBeUndefined();
    expect(report.models.map((m) => m.key)).toEqual(["claude", "gpt"]);
    expect(report.models[0]).toMatchObject({ calls: 4, inputTokens: 2250n, cacheReadTokens: 1800n, cacheReadTokensCalls: 4 });

    // Member, range and conversation limit.
    const m2 = await store.call("cacheUsage", { memberId: "m2" });
    expect(m2.conversations).toEqual([]);
    expect(m2.models.map((m) => [m.key, m.calls])).toEqual([["claude", 1]]);
    const late = await store.call("cacheUsage", { since: "2026-03-01T10:30:00Z", until: "2026-03-01T12:00:00Z" });
    expect(late.conversations.map((c) => [c.key, c.calls])).toEqual([["ca", 1]]);
    expect((await store.call("cacheUsage", { conversationLimit: 1 })).conversations.map((c) => c.key)).toEqual(["cb"]);
    expect((await store.call("cacheUsage", { since: "yesterday" })).error?.kind).toBe(StoreErrorKind.INVALID);
  });
});
