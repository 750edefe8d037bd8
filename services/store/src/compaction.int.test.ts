import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStatus, StoreErrorKind, UserOrigin } from "@byok/contracts";
import { assistantText, describeMessages, startTestStore, userText, type MessageInit, type TestStore } from "./store-test-harness.ts";

function summaryMessage(text: string): MessageInit {
  return { body: { case: "user", value: { clientId: "summary:test", origin: UserOrigin.SUMMARY, content: [{ part: { case: "text", value: { text } } }] } } };
}

describe("revision.compact", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  /** A run with turn 1 (question + answer) and turn 2's question; returns the run's head and its history. */
  async function longConversation() {
    const begun = await store.call("beginRun", {
      runId: "r1",
      conversationId: "c1",
      memberId: "m1",
      initialMessages: [userText("<ctx>", "request-context:abc"), userText("turn one", "u1")],
    });
    const answered = await store.call("appendMessages", {
      runId: "r1",
      expectedHeadRevisionId: begun.run!.startRevisionId,
      messages: [assistantText("answer one")],
      providerCallIndex: 1,
      requestInputTokens: 1234n,
    });
    const asked = await store.call("appendMessages", { runId: "r1", expectedHeadRevisionId: answered.revisionId, messages: [userText("turn two", "u2")] });
    const history = await store.call("getRevisionMessages", { revisionId: asked.revisionId });
    return { head: asked.revisionId, history, startRevisionId: begun.run!.startRevisionId };
  }

  it("writes a new chain root that keeps the chosen messages, moves the head and leaves the old chain as it was", async () => {
    const { head, history } = await longConversation();
    // Kept: the request context (index 0) and turn two (index 3).
    const kept = [history.messageIds[0]!, history.messageIds[3]!];
    const compacted = await store.call("compactHistory", {
      runId: "r1",
      expectedHeadRevisionId: head,
      summary: summaryMessage("they asked one thing"),
      keptMessageIds: kept,
      summarizedCount: 2,
      providerCallIndex: 2,
    });
    expect(compacted.error).toBeUndefined();
    expect(describeMessages(compacted.messages)).toEqual(["user:they asked one thing", "user:<ctx>", "user:turn two"]);

    const after = await store.call("getRevisionMessages", { revisionId: compacted.revisionId });
    expect(after.revisionChain).toEqual([compacted.revisionId]);
    expect(after.messageIds.slice(1)).toEqual(kept);
    expect(after.compaction).toMatchObject({ revisionId: compacted.revisionId, sourceRevisionId: head, summarizedCount: 2, runId: "r1" });
    // No anchor measured this history yet.
    expect(after.anchor).toBeUndefined();

    const conversation = await store.call("getConversation", { conversationId: "c1" });
    expect(conversation.headRevisionId).toBe(compacted.revisionId);
    const run = await store.call("getRun", { runId: "r1" });
    expect(run.run?.headRevisionId).toBe(compacted.revisionId);
    expect(run.run?.providerCallIndex).toBe(2);

    // The replaced history is untouched and still readable.
    const before = await store.call("getRevisionMessages", { revisionId: head });
    expect(describeMessages(before.messages)).toEqual(describeMessages(history.messages));
    expect(before.compaction).toBeUndefined();

    // A repeat (same summary call) returns the same revision.
    const again = await store.call("compactHistory", {
      runId: "r1",
      expectedHeadRevisionId: head,
      summary: summaryMessage("they asked one thing"),
      keptMessageIds: kept,
      summarizedCount: 2,
      providerCallIndex: 2,
    });
    expect(again.revisionId).toBe(compacted.revisionId);
  });

  it("is found by digest when the client sends the compacted history back, and the old history too", async () => {
    const { head, history } = await longConversation();
    const compacted = await store.call("compactHistory", {
      runId: "r1",
      expectedHeadRevisionId: head,
      summary: summaryMessage("sum"),
      keptMessageIds: [history.messageIds[3]!],
      summarizedCount: 3,
      providerCallIndex: 2,
    });
    const final = await store.call("appendMessages", {
      runId: "r1",
      expectedHeadRevisionId: compacted.revisionId,
      messages: [assistantText("answer two")],
      providerCallIndex: 3,
    });
    await store.call("finishRun", { runId: "r1", status: RunStatus.COMPLETED });

    const next = await store.call("importHistory", {
      conversationId: "c1",
      memberId: "m1",
      messages: [summaryMessage("sum"), userText("turn two", "u2"), assistantText("answer two")],
    });
    expect(next.revisionId).toBe(final.revisionId);
    const rolledBack = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: history.messages });
    expect(rolledBack.revisionId).toBe(head);
  });

  it("refuses kept messages from elsewhere or out of order, a summary that is not one, and a moved head", async () => {
    const { head, history, startRevisionId } = await longConversation();
    const base = { runId: "r1", expectedHeadRevisionId: head, summary: summaryMessage("s"), summarizedCount: 1, providerCallIndex: 2 };
    const outOfOrder = await store.call("compactHistory", { ...base, keptMessageIds: [history.messageIds[3]!, history.messageIds[0]!] });
    expect(outOfOrder.error?.kind).toBe(StoreErrorKind.INVALID);
    const foreign = await store.call("compactHistory", { ...base, keptMessageIds: ["00000000-0000-4000-8000-000000000000"] });
    expect(foreign.error?.kind).toBe(StoreErrorKind.INVALID);
    const notSummary = await store.call("compactHistory", { ...base, summary: userText("plain"), keptMessageIds: [] });
    expect(notSummary.error?.kind).toBe(StoreErrorKind.INVALID);
    const stale = await store.call("compactHistory", { ...base, expectedHeadRevisionId: startRevisionId, keptMessageIds: [] });
    expect(stale.error?.kind).toBe(StoreErrorKind.HEAD_MISMATCH);
    // Nothing was written by the refusals.
    const revisions = await store.sql("SELECT count(*)::int AS n FROM revisions WHERE compacted_from_id IS NOT NULL");
    expect(revisions.rows[0].n).toBe(0);
  });
});

describe("context anchors", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  it("come back with every later history of the measured revision, newest first", async () => {
    const begun = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("q", "u1")] });
    const start = begun.run!.startRevisionId;
    const round = await store.call("createToolRound", {
      runId: "r1",
      roundId: "r1:round:1",
      expectedHeadRevisionId: start,
      assistant: { content: [{ part: { case: "toolCall", value: { callId: "c", name: "Read", argumentsJson: "{}" } } }] },
      providerCallIndex: 1,
      requestInputTokens: 500n,
    });
    expect(round.error).toBeUndefined();
    const result = await store.call("commitToolResult", { runId: "r1", roundId: "r1:round:1", callId: "c", content: "file" });
    const later = await store.call("getRevisionMessages", { revisionId: result.revisionId });
    expect(later.anchor).toMatchObject({ revisionId: start, messageCount: 1, inputTokens: 500n });

    const final = await store.call("appendMessages", {
      runId: "r1",
      expectedHeadRevisionId: result.revisionId,
      messages: [assistantText("done")],
      providerCallIndex: 2,
      requestInputTokens: 900n,
    });
    const end = await store.call("getRevisionMessages", { revisionId: final.revisionId });
    expect(end.anchor).toMatchObject({ revisionId: result.revisionId, messageCount: 3, inputTokens: 900n });
  });
});
