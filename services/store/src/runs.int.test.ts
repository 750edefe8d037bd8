import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FailureKind, RunStatus, StoreErrorKind } from "@byok/contracts";
import { assistantText, describeMessages, startTestStore, userText, type TestStore } from "./store-test-harness.ts";

describe("runs", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  async function history(revisionId: string): Promise<string[]> {
    const response = await store.call("getRevisionMessages", { revisionId });
    expect(response.error).toBeUndefined();
    return describeMessages(response.messages);
  }

  describe("run.begin", () => {
    it("appends the initial messages onto the base revision and takes ownership", async () => {
      const base = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("earlier")] });
      const begun = await store.call("beginRun", {
        runId: "r1",
        conversationId: "c1",
        memberId: "m1",
        baseRevisionId: base.revisionId,
        initialMessages: [userText("context"), userText("question")],
        modelId: "gpt-test",
      });
      expect(begun.error).toBeUndefined();
      expect(begun.supersededRunId).toBe("");
      expect(begun.run).toMatchObject({ runId: "r1", status: RunStatus.RUNNING, beginCount: 1, modelId: "gpt-test" });
      expect(begun.run!.headRevisionId).toBe(begun.run!.startRevisionId);
      expect(await history(begun.run!.startRevisionId)).toEqual(["user:earlier", "user:context", "user:question"]);
      const conversation = await store.call("getConversation", { conversationId: "c1" });
      expect(conversation).toMatchObject({ activeRunId: "r1", headRevisionId: begun.run!.startRevisionId });
    });

    it("with_history answers with the head's history in the same reply (none for a completed repeat start)", async () => {
      const base = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("earlier")] });
      const begun = await store.call("beginRun", {
        runId: "r1",
        conversationId: "c1",
        memberId: "m1",
        baseRevisionId: base.revisionId,
        initialMessages: [userText("question", "u1")],
        onceClientIds: ["u1"],
        withHistory: true,
      });
      expect(begun.error).toBeUndefined();
      expect(describeMessages(begun.history!.messages)).toEqual(["user:earlier", "user:question"]);
      const separate = await store.call("getRevisionMessages", { revisionId: begun.run!.headRevisionId });
      expect(begun.history!.messageIds).toEqual(separate.messageIds);
      expect(begun.history!.revisionChain).toEqual(separate.revisionChain);
      expect(begun.openRound).toBeUndefined();
      await store.call("finishRun", { runId: "r1", status: RunStatus.COMPLETED });

      const empty = await store.call("beginRun", { runId: "r2", conversationId: "c2", memberId: "m1", withHistory: true });
      expect(empty.history).toMatchObject({ messages: [], messageIds: [] });
      const repeated = await store.call("beginRun", {
        runId: "r3",
        conversationId: "c1",
        memberId: "m1",
        baseRevisionId: begun.run!.headRevisionId,
        initialMessages: [userText("question", "u1")],
        onceClientIds: ["u1"],
        withHistory: true,
      });
      expect(repeated.run!.status).toBe(RunStatus.COMPLETED);
      expect(repeated.history).toBeUndefined();
    });

    it("is idempotent by run id: a redelivered begin counts but appends nothing", async () => {
      const request = { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("question")] };
      const first = await store.call("beginRun", request);
      const second = await store.call("beginRun", request);
      expect(second.error).toBeUndefined();
      expect(second.run!.beginCount).toBe(2);
      expect(second.run!.startRevisionId).toBe(first.run!.startRevisionId);
      expect(second.supersededRunId).toBe("");
      const revisions = await store.sql("SELECT count(*)::int AS n FROM revisions");
      expect(revisions.rows[0].n).toBe(1);
    });

    it("creates a run exactly once when the same begin arrives concurrently", async () => {
      const request = { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("question")] };
      const results = await Promise.all([1, 2, 3, 4].map(() => store.call("beginRun", request)));
      expect(results.every((r) => r.error === undefined)).toBe(true);
      expect(new Set(results.map((r) => r.run!.startRevisionId)).size).toBe(1);
      expect(results.map((r) => r.run!.beginCount).sort()).toEqual([1, 2, 3, 4]);
      const revisions = await store.sql("SELECT count(*)::int AS n FROM revisions");
      expect(revisions.rows[0].n).toBe(1);
    });

    it("supersedes the conversation's running run in the same transaction", async () => {
      const old = await store.call("beginRun", { runId: "old", conversationId: "c1", memberId: "m1", initialMessages: [userText("first")] });
      const next = await store.call("beginRun", {
        runId: "new",
        conversationId: "c1",
        memberId: "m1",
        baseRevisionId: old.run!.startRevisionId,
        initialMessages: [userText("second")],
      });
      expect(next.supersededRunId).toBe("old");
      const oldRun = await store.call("getRun", { runId: "old" });
      expect(oldRun.run!.status).toBe(RunStatus.CANCELLED);
      expect(oldRun.run!.failureMessage).toBe("superseded by run new");
      expect((await store.call("getConversation", { conversationId: "c1" })).activeRunId).toBe("new");

      // A late append of the old run cannot move the head, even onto the head it last saw.
      const late = await store.call("appendMessages", {
        runId: "old",
        expectedHeadRevisionId: old.run!.startRevisionId,
        messages: [assistantText("late answer")],
        providerCallIndex: 1,
      });
      expect(late.error?.kind).toBe(StoreErrorKind.NOT_ACTIVE);
      const conversation = await store.call("getConversation", { conversationId: "c1" });
      expect(conversation.headRevisionId).toBe(next.run!.startRevisionId);
      expect(await history(conversation.headRevisionId)).toEqual(["user:first", "user:second"]);
    });

    it("rejects another member's conversation and a base revision of another conversation", async () => {
      await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "alice", initialMessages: [userText("q")] });
      const forbidden = await store.call("beginRun", { runId: "r2", conversationId: "c1", memberId: "mallory", initialMessages: [userText("q")] });
      expect(forbidden.error?.kind).toBe(StoreErrorKind.FORBIDDEN);
      expect((await store.call("getRun", { runId: "r2" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);

      const other = await store.call("importHistory", { conversationId: "c2", memberId: "alice", messages: [userText("elsewhere")] });
      const wrongBase = await store.call("beginRun", { runId: "r3", conversationId: "c1", memberId: "alice", baseRevisionId: other.revisionId });
      expect(wrongBase.error?.kind).toBe(StoreErrorKind.INVALID);
      // The rejected begin changed nothing: r1 is still the active run.
      expect((await store.call("getConversation", { conversationId: "c1" })).activeRunId).toBe("r1");
    });
  });

  describe("run.append", () => {
    async function begin(runId = "r1") {
      const begun = await store.call("beginRun", { runId, conversationId: "c1", memberId: "m1", initialMessages: [userText("question")] });
      return begun.run!;
    }

    it("appends onto the expected head, moves it and records the model call index", async () => {
      const run = await begin();
      const appended = await store.call("appendMessages", {
        runId: "r1",
        expectedHeadRevisionId: run.startRevisionId,
        messages: [assistantText("answer")],
        providerCallIndex: 1,
      });
      expect(appended.error).toBeUndefined();
      const conversation = await store.call("getConversation", { conversationId: "c1" });
      expect(conversation.headRevisionId).toBe(appended.revisionId);
      const record = await store.call("getRun", { runId: "r1" });
      expect(record.run).toMatchObject({ headRevisionId: appended.revisionId, providerCallIndex: 1, startRevisionId: run.startRevisionId });
      expect(await history(appended.revisionId)).toEqual(["user:question", "assistant:answer"]);
      // The appended message's stored id comes back (the worker then holds the new head's history without a read).
      const stored = await store.call("getRevisionMessages", { revisionId: appended.revisionId });
      expect(appended.messageIds).toEqual(stored.messageIds.slice(1));
    });

    it("returns no message ids for a repeated append or a message it stored changed (a NUL character)", async () => {
      const run = await begin();
      const request = { runId: "r1", expectedHeadRevisionId: run.startRevisionId, messages: [assistantText("answer")], providerCallIndex: 1 };
      expect((await store.call("appendMessages", request)).messageIds).toHaveLength(1);
      expect((await store.call("appendMessages", request)).messageIds).toEqual([]);
      await begin("r2");
      const head = (await store.call("getConversation", { conversationId: "c1" })).headRevisionId;
      const rewritten = await store.call("appendMessages", { runId: "r2", expectedHeadRevisionId: head, messages: [assistantText("a\u0000b")], providerCallIndex: 1 });
      expect(rewritten.error).toBeUndefined();
      expect(rewritten.messageIds).toEqual([]);
    });

    it("rejects a wrong expected head and leaves the history unchanged", async () => {
      const run = await begin();
      const first = await store.call("appendMessages", { runId: "r1", expectedHeadRevisionId: run.startRevisionId, messages: [assistantText("one")], providerCallIndex: 1 });
      const stale = await store.call("appendMessages", { runId: "r1", expectedHeadRevisionId: run.startRevisionId, messages: [assistantText("two")], providerCallIndex: 2 });
      expect(stale.error?.kind).toBe(StoreErrorKind.HEAD_MISMATCH);
      expect(stale.revisionId).toBe("");
      expect((await store.call("getConversation", { conversationId: "c1" })).headRevisionId).toBe(first.revisionId);
      expect(await history(first.revisionId)).toEqual(["user:question", "assistant:one"]);
    });

    it("returns the earlier revision when the same model call is appended again (retry or failover)", async () => {
      const run = await begin();
      const request = { runId: "r1", expectedHeadRevisionId: run.startRevisionId, messages: [assistantText("answer")], providerCallIndex: 3 };
      const first = await store.call("appendMessages", request);
      // A second worker re-issued call 3 and got different text: still no second answer.
      const again = await store.call("appendMessages", { ...request, messages: [assistantText("different answer")] });
      expect(again.error).toBeUndefined();
      expect(again.revisionId).toBe(first.revisionId);
      expect(await history(first.revisionId)).toEqual(["user:question", "assistant:answer"]);
      const messages = await store.sql("SELECT count(*)::int AS n FROM messages");
      expect(messages.rows[0].n).toBe(2);
    });

    it("without a call index, deduplicates the same messages onto the same head", async () => {
      const run = await begin();
      const request = { runId: "r1", expectedHeadRevisionId: run.startRevisionId, messages: [userText("runtime event", "evt-1")], providerCallIndex: 0 };
      const first = await store.call("appendMessages", request);
      const again = await store.call("appendMessages", request);
      expect(again.revisionId).toBe(first.revisionId);
      expect(await history(first.revisionId)).toEqual(["user:question", "user:runtime event"]);
    });

    it("refuses appends of an unknown or finished run", async () => {
      const run = await begin();
      const unknown = await store.call("appendMessages", { runId: "nope", expectedHeadRevisionId: "", messages: [assistantText("x")] });
      expect(unknown.error?.kind).toBe(StoreErrorKind.NOT_FOUND);
      await store.call("finishRun", { runId: "r1", status: RunStatus.COMPLETED });
      const afterFinish = await store.call("appendMessages", { runId: "r1", expectedHeadRevisionId: run.startRevisionId, messages: [assistantText("x")], providerCallIndex: 1 });
      expect(afterFinish.error?.kind).toBe(StoreErrorKind.NOT_ACTIVE);
    });
  });

  describe("run.finish", () => {
    it("sets the terminal status once, clears ownership and keeps the first outcome", async () => {
      await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("q")] });
      const failed = await store.call("finishRun", {
        runId: "r1",
        status: RunStatus.FAILED,
        failureKind: FailureKind.PROVIDER,
        failureMessage: "upstream 500",
        usage: { inputTokens: 12n, outputTokens: 3n },
      });
      expect(failed.run).toMatchObject({ status: RunStatus.FAILED, failureKind: FailureKind.PROVIDER, failureMessage: "upstream 500" });
      expect(failed.run!.usage).toMatchObject({ inputTokens: 12n, outputTokens: 3n });
      expect(failed.run!.usage!.cacheReadTokens).toBeUndefined();
      expect((await store.call("getConversation", { conversationId: "c1" })).activeRunId).toBe("");

      const again = await store.call("finishRun", { runId: "r1", status: RunStatus.COMPLETED });
      expect(again.error).toBeUndefined();
      expect(again.run).toMatchObject({ status: RunStatus.FAILED, failureKind: FailureKind.PROVIDER });

      const redelivered = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("q")] });
      expect(redelivered.run).toMatchObject({ status: RunStatus.FAILED, beginCount: 2 });
    });

    it("refuses the finish of an owner whose run was begun again since, and takes the current owner's", async () => {
      const request = { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("q")] };
      await store.call("beginRun", request);
      await store.call("beginRun", request);
      const stale = await store.call("finishRun", { runId: "r1", status: RunStatus.FAILED, failureKind: FailureKind.PROVIDER, failureMessage: "upstream 500", beginCount: 1 });
      expect(stale.error?.kind).toBe(StoreErrorKind.NOT_ACTIVE);
      expect((await store.call("getRun", { runId: "r1" })).run?.status).toBe(RunStatus.RUNNING);
      const current = await store.call("finishRun", { runId: "r1", status: RunStatus.COMPLETED, beginCount: 2 });
      expect(current.run?.status).toBe(RunStatus.COMPLETED);
      // Once ended, any owner's finish answers the recorded end.
      expect((await store.call("finishRun", { runId: "r1", status: RunStatus.FAILED, beginCount: 1 })).run?.status).toBe(RunStatus.COMPLETED);
    });

    it("does not clear the ownership of a newer run", async () => {
      await store.call("beginRun", { runId: "old", conversationId: "c1", memberId: "m1", initialMessages: [userText("q")] });
      await store.call("beginRun", { runId: "new", conversationId: "c1", memberId: "m1", initialMessages: [userText("q2")] });
      const finished = await store.call("finishRun", { runId: "old", status: RunStatus.COMPLETED });
      expect(finished.run!.status).toBe(RunStatus.CANCELLED);
      expect((await store.call("getConversation", { conversationId: "c1" })).activeRunId).toBe("new");
    });

    it("rejects a non-terminal status and unknown runs", async () => {
      await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1" });
      expect((await store.call("finishRun", { runId: "r1", status: RunStatus.RUNNING })).error?.kind).toBe(StoreErrorKind.INVALID);
      expect((await store.call("finishRun", { runId: "zz", status: RunStatus.COMPLETED })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    });
  });

  describe("reads", () => {
    it("answers NOT_FOUND for unknown ids and an empty history for the empty revision", async () => {
      expect((await store.call("getRun", { runId: "nope" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
      expect((await store.call("getConversation", { conversationId: "nope" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
      expect((await store.call("getRevisionMessages", { revisionId: "not-a-uuid" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
      expect((await store.call("getRevisionMessages", { revisionId: "00000000-0000-4000-8000-000000000000" })).error?.kind).toBe(
        StoreErrorKind.NOT_FOUND,
      );
      const empty = await store.call("getRevisionMessages", { revisionId: "" });
      expect(empty.error).toBeUndefined();
      expect(empty.messages).toEqual([]);
    });

    it("with a known revision in the chain, sends only what follows it (run.begin too); otherwise the whole history", async () => {
      const base = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("one"), assistantText("two")] });
      const begun = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", baseRevisionId: base.revisionId, initialMessages: [userText("three")] });
      const head = await store.call("appendMessages", { runId: "r1", expectedHeadRevisionId: begun.run!.headRevisionId, messages: [assistantText("four")], providerCallIndex: 1, requestInputTokens: 123n });
      // The call was built from the start revision and measured after a reader held it: its anchor still comes back.
      const fromStart = await store.call("getRevisionMessages", { revisionId: head.revisionId, knownRevisionId: begun.run!.headRevisionId });
      expect(fromStart.anchor).toMatchObject({ messageCount: 3, inputTokens: 123n });
      const since = await store.call("getRevisionMessages", { revisionId: head.revisionId, knownRevisionId: base.revisionId });
      expect(since.continuesRevisionId).toBe(base.revisionId);
      expect(describeMessages(since.messages)).toEqual(["user:three", "assistant:four"]);
      const whole = await store.call("getRevisionMessages", { revisionId: head.revisionId });
      expect(since.messageIds).toEqual(whole.messageIds.slice(2));
      expect(since.revisionChain).toEqual(whole.revisionChain.slice(1));
      const same = await store.call("getRevisionMessages", { revisionId: head.revisionId, knownRevisionId: head.revisionId });
      expect(same).toMatchObject({ continuesRevisionId: head.revisionId, messages: [], messageIds: [] });
      // A revision of another branch (or conversation) is not in the chain: the whole history.
      const other = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("elsewhere")] });
      const unrelated = await store.call("getRevisionMessages", { revisionId: head.revisionId, knownRevisionId: other.revisionId });
      expect(unrelated.continuesRevisionId).toBe("");
      expect(describeMessages(unrelated.messages)).toEqual(["user:one", "assistant:two", "user:three", "assistant:four"]);
      await store.call("finishRun", { runId: "r1", status: RunStatus.COMPLETED });
      const next = await store.call("beginRun", {
        runId: "r2",
        conversationId: "c1",
        memberId: "m1",
        baseRevisionId: head.revisionId,
        initialMessages: [userText("five")],
        withHistory: true,
        knownRevisionId: begun.run!.headRevisionId,
      });
      expect(next.history?.continuesRevisionId).toBe(begun.run!.headRevisionId);
      expect(describeMessages(next.history!.messages)).toEqual(["assistant:four", "user:five"]);
    });
  });
});
