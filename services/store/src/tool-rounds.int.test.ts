import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { RunStatus, StoreErrorKind, type AssistantMessageSchema } from "@byok/contracts";
import { describeMessages, startTestStore, userText, type TestStore } from "./store-test-harness.ts";

function toolCall(callId: string, name = "read_file") {
  return { part: { case: "toolCall" as const, value: { callId, name, argumentsJson: `{"id":"${callId}"}` } } };
}

/** reasoning + text + three tool calls + replay state, as one model response. */
const ASSISTANT: MessageInitShape<typeof AssistantMessageSchema> = {
  content: [
    { part: { case: "reasoning", value: { text: "plan" } } },
    { part: { case: "text", value: { text: "Let me look." } } },
    toolCall("A"),
    toolCall("B", "grep"),
    toolCall("C"),
  ],
  replay: { providerKind: "openai-responses", routeId: "gpt", data: new Uint8Array([1, 2, 3]) },
};

describe("tool rounds", () => {
  let store: TestStore;
  let startRevisionId: string;
  beforeEach(async () => {
    store = await startTestStore();
    const begun = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("do it")] });
    startRevisionId = begun.run!.startRevisionId;
  });
  afterEach(() => store.close());

  async function createRound(roundId = "round-1", providerCallIndex = 1) {
    const created = await store.call("createToolRound", {
      runId: "r1",
      roundId,
      expectedHeadRevisionId: startRevisionId,
      assistant: ASSISTANT,
      providerCallIndex,
    });
    expect(created.error).toBeUndefined();
    return created;
  }

  function commit(callId: string, content: string, roundId = "round-1", isError = false) {
    return store.call("commitToolResult", { runId: "r1", roundId, callId, content, isError });
  }

  it("a repeated run.begin with_history answers with the open round and its committed results", async () => {
    await createRound();
    expect((await commit("B", "grep output")).error).toBeUndefined();
    const again = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("do it")], withHistory: true });
    expect(again.error).toBeUndefined();
    expect(again.run!.beginCount).toBe(2);
    const open = await store.call("getOpenToolRound", { runId: "r1" });
    expect(again.openRound).toEqual(open.round);
    expect(again.openRound!.results.map((r) => r.callId)).toEqual(["B"]);
    const separate = await store.call("getRevisionMessages", { revisionId: again.run!.headRevisionId });
    expect(again.history!.messages).toEqual(separate.messages);
  });

  it("persists the round before any result and appends nothing to the history", async () => {
    const created = await createRound();
    expect(created.existing).toBe(false);
    expect(created.round).toMatchObject({ roundId: "round-1", baseRevisionId: startRevisionId, settled: false, version: 1, headRevisionId: startRevisionId });
    expect(created.round!.calls.map((c) => c.callId)).toEqual(["A", "B", "C"]);
    expect((await store.call("getConversation", { conversationId: "c1" })).headRevisionId).toBe(startRevisionId);

    const open = await store.call("getOpenToolRound", { runId: "r1" });
    expect(open.round!.roundId).toBe("round-1");
    expect(open.round!.results).toEqual([]);
    expect(open.round!.assistant!.replay?.providerKind).toBe("openai-responses");
  });

  it("commits results as adjacent pairs in arrival order, with text, reasoning and replay on the first pair only", async () => {
    await createRound();
    const c = await commit("C", "third call, first result");
    const a = await commit("A", "first call, second result", "round-1", true);
    const b = await commit("B", "second call, last result");

    expect([c.completionSeq, a.completionSeq, b.completionSeq]).toEqual([1, 2, 3]);
    expect([c.roundSettled, a.roundSettled, b.roundSettled]).toEqual([false, false, true]);
    expect([c.toolRoundVersion, a.toolRoundVersion, b.toolRoundVersion]).toEqual([2, 3, 4]);
    expect(describeMessages(c.appended)).toEqual(["assistant:(thinking plan)Let me look.[call C] +replay", "result:C=third call, first result"]);

    const conversation = await store.call("getConversation", { conversationId: "c1" });
    expect(conversation.headRevisionId).toBe(b.revisionId);
    const history = await store.call("getRevisionMessages", { revisionId: b.revisionId });
    expect(describeMessages(history.messages)).toEqual([
      "user:do it",
      "assistant:(thinking plan)Let me look.[call C] +replay",
      "result:C=third call, first result",
      "assistant:[call A]",
      "result:A=first call, second result (error)",
      "assistant:[call B]",
      "result:B=second call, last result",
    ]);
    // One revision per pair, chained.
    expect(history.revisionChain).toEqual([startRevisionId, c.revisionId, a.revisionId, b.revisionId]);
    const toolResult = history.messages[6]!;
    expect(toolResult.body.case === "toolResult" && toolResult.body.value.toolName).toBe("grep");

    expect((await store.call("getOpenToolRound", { runId: "r1" })).round).toBeUndefined();
  });

  it("returns the stored pair for a duplicate result and never appends a second one", async () => {
    await createRound();
    const first = await commit("B", "original");
    const duplicate = await commit("B", "a different retry");
    expect(duplicate.error).toBeUndefined();
    expect(duplicate).toMatchObject({ duplicate: true, revisionId: first.revisionId, completionSeq: 1 });
    expect(describeMessages(duplicate.appended)).toEqual(describeMessages(first.appended));
    const messages = await store.sql("SELECT count(*)::int AS n FROM messages");
    expect(messages.rows[0].n).toBe(3);
    const next = await commit("A", "next");
    expect(next.completionSeq).toBe(2);
  });

  it("rejects a result for a call the round does not have", async () => {
    await createRound();
    const unknown = await commit("Z", "who?");
    expect(unknown.error?.kind).toBe(StoreErrorKind.INVALID);
    const missingRound = await commit("A", "x", "round-9");
    expect(missingRound.error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("getConversation", { conversationId: "c1" })).headRevisionId).toBe(startRevisionId);
  });

  it("lets a worker that takes over find the open round with the results committed so far", async () => {
    await createRound();
    await commit("B", "done before the crash");
    const open = await store.call("getOpenToolRound", { runId: "r1" });
    expect(open.round!.results.map((r) => [r.callId, r.completionSeq, r.content])).toEqual([["B", 1, "done before the crash"]]);
    expect(open.round!.version).toBe(2);
    expect(open.round!.headRevisionId).toBe(open.round!.results[0]!.revisionId);
    expect(open.round!.headRevisionId).toBe((await store.call("getRun", { runId: "r1" })).run!.headRevisionId);
  });

  it("is idempotent by round id and by model call index", async () => {
    const first = await createRound();
    const sameId = await createRound();
    expect(sameId.existing).toBe(true);
    expect(sameId.round!.roundId).toBe("round-1");
    // A new owner re-ran model call 1 and named its round differently: the stored round wins.
    const sameCall = await createRound("round-other", 1);
    expect(sameCall.existing).toBe(true);
    expect(sameCall.round!.roundId).toBe(first.round!.roundId);
  });

  it("allows one open round per run and checks the expected head", async () => {
    await createRound();
    const second = await store.call("createToolRound", {
      runId: "r1",
      roundId: "round-2",
      expectedHeadRevisionId: startRevisionId,
      assistant: ASSISTANT,
      providerCallIndex: 2,
    });
    expect(second.error?.kind).toBe(StoreErrorKind.INVALID);

    await commit("A", "1");
    await commit("B", "2");
    const settled = await commit("C", "3");
    const stale = await store.call("createToolRound", { runId: "r1", roundId: "round-2", expectedHeadRevisionId: startRevisionId, assistant: ASSISTANT, providerCallIndex: 2 });
    expect(stale.error?.kind).toBe(StoreErrorKind.HEAD_MISMATCH);
    const next = await store.call("createToolRound", { runId: "r1", roundId: "round-2", expectedHeadRevisionId: settled.revisionId, assistant: ASSISTANT, providerCallIndex: 2 });
    expect(next.error).toBeUndefined();
    expect(next.round!.baseRevisionId).toBe(settled.revisionId);
  });

  it("rejects rounds without tool calls or with duplicate call ids", async () => {
    const noCalls = await store.call("createToolRound", {
      runId: "r1",
      roundId: "x",
      expectedHeadRevisionId: startRevisionId,
      assistant: { content: [{ part: { case: "text", value: { text: "just text" } } }] },
    });
    expect(noCalls.error?.kind).toBe(StoreErrorKind.INVALID);
    const duplicateIds = await store.call("createToolRound", {
      runId: "r1",
      roundId: "y",
      expectedHeadRevisionId: startRevisionId,
      assistant: { content: [toolCall("A"), toolCall("A")] },
    });
    expect(duplicateIds.error?.kind).toBe(StoreErrorKind.INVALID);
  });

  it("stops a superseded run from creating rounds or committing results", async () => {
    await createRound();
    await store.call("beginRun", { runId: "r2", conversationId: "c1", memberId: "m1", baseRevisionId: startRevisionId, initialMessages: [userText("new")] });
    const late = await commit("A", "late");
    expect(late.error?.kind).toBe(StoreErrorKind.NOT_ACTIVE);
    const lateRound = await store.call("createToolRound", { runId: "r1", roundId: "round-2", expectedHeadRevisionId: startRevisionId, assistant: ASSISTANT, providerCallIndex: 2 });
    expect(lateRound.error?.kind).toBe(StoreErrorKind.NOT_ACTIVE);
    expect((await store.call("getRun", { runId: "r1" })).run!.status).toBe(RunStatus.CANCELLED);
  });

  it("commits concurrent results one after another without losing or duplicating any", async () => {
    await createRound();
    const results = await Promise.all(["A", "B", "C", "A", "B", "C"].map((id, i) => commit(id, `result ${i}`)));
    expect(results.every((r) => r.error === undefined)).toBe(true);
    expect(results.filter((r) => !r.duplicate).map((r) => r.completionSeq).sort()).toEqual([1, 2, 3]);
    expect(results.filter((r) => r.duplicate)).toHaveLength(3);
    const head = (await store.call("getConversation", { conversationId: "c1" })).headRevisionId;
    const history = await store.call("getRevisionMessages", { revisionId: head });
    expect(history.messages).toHaveLength(7);
  });

  it("a repeated run.begin racing a tool result answers with a head and an open round that agree", async () => {
    // A redelivery's begin and the first owner's result commit at the same moment, 30 times: the new
    // owner must see the result either in its history (the round settled, no open round) or not at
    // all (the round open, without it). Seeing neither made it call the model without the result.
    for (let i = 0; i < 30; i++) {
      const runId = `race-${i}`;
      const conversationId = `race-conv-${i}`;
      const first = await store.call("beginRun", { runId, conversationId, memberId: "m1", initialMessages: [userText("do it")] });
      const created = await store.call("createToolRound", {
        runId,
        roundId: "round-1",
        expectedHeadRevisionId: first.run!.startRevisionId,
        assistant: { content: [toolCall("A")] },
        providerCallIndex: 1,
      });
      expect(created.error).toBeUndefined();
      const [again, committed] = await Promise.all([
        store.call("beginRun", { runId, conversationId, memberId: "m1", initialMessages: [userText("do it")], withHistory: true }),
        store.call("commitToolResult", { runId, roundId: "round-1", callId: "A", content: "output", isError: false }),
      ]);
      expect(again.error).toBeUndefined();
      expect(committed.error).toBeUndefined();
      const historyHasResult = again.history!.messages.some((m) => m.body.case === "toolResult");
      expect({ iteration: i, openRound: again.openRound !== undefined, historyHasResult }).toEqual({ iteration: i, openRound: !historyHasResult, historyHasResult });
      if (again.openRound) expect(again.openRound.results).toHaveLength(0);
    }
  });
});
