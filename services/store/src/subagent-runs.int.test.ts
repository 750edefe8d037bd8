/**
 * What the store does for sub-agents and the tools around them: a child run is
 * linked to its parent run and tool call and must belong to the parent's
 * member; run.children lists a run's sub-agent runs; member.usage counts them;
 * a start marked "once" (a background sub-agent's completion notice) is never
 * appended twice to a conversation, unless the run that took it failed; and
 * tool_result.find gives back a committed result by tool call id.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStatus, StoreErrorKind } from "@byok/contracts";
import { describeMessages, startTestStore, userText, type TestStore } from "./store-test-harness.ts";

describe("sub-agent runs and once-only starts", () => {
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

  it("links a child run to its parent run and tool call, lists it under the parent and counts it for the member", async () => {
    await store.call("beginRun", { runId: "parent", conversationId: "c-parent", memberId: "alice", initialMessages: [userText("delegate")] });
    const child = await store.call("beginRun", {
      runId: "child",
      conversationId: "c-child",
      memberId: "alice",
      initialMessages: [userText("explore the repo")],
      parentRunId: "parent",
      parentToolCallId: "call_task",
    });
    expect(child.error).toBeUndefined();
    expect(child.run).toMatchObject({ parentRunId: "parent", parentToolCallId: "call_task", status: RunStatus.RUNNING });

    const children = await store.call("listChildRuns", { parentRunId: "parent" });
    expect(children.runs.map((r) => [r.runId, r.parentToolCallId, r.memberId])).toEqual([["child", "call_task", "alice"]]);
    expect((await store.call("listChildRuns", { parentRunId: "child" })).runs).toEqual([]);

    const usage = await store.call("memberUsage", { memberId: "alice" });
    expect(usage.members.map((m) => [m.memberId, m.runs, m.subagentRuns])).toEqual([["alice", 2, 1]]);
  });

  it("refuses a child run of another member's parent run", async () => {
    await store.call("beginRun", { runId: "parent", conversationId: "c-parent", memberId: "alice", initialMessages: [userText("delegate")] });
    const foreign = await store.call("beginRun", { runId: "child", conversationId: "c-child", memberId: "mallory", initialMessages: [userText("x")], parentRunId: "parent" });
    expect(foreign.error?.kind).toBe(StoreErrorKind.FORBIDDEN);
    expect((await store.call("listChildRuns", { parentRunId: "parent" })).runs).toEqual([]);
  });

  it("applies a once-only start one time: a repeat is completed at once, appends nothing and supersedes nobody", async () => {
    const first = await store.call("beginRun", {
      runId: "done-1",
      conversationId: "c1",
      memberId: "alice",
      initialMessages: [userText("sub-agent A finished", "background:A")],
      onceClientIds: ["background:A"],
    });
    expect(first.run?.status).toBe(RunStatus.RUNNING);
    expect(first.duplicateOfRunId).toBe("");

    const repeat = await store.call("beginRun", {
      runId: "done-2",
      conversationId: "c1",
      memberId: "alice",
      baseRevisionId: first.run!.startRevisionId,
      initialMessages: [userText("sub-agent A finished", "background:A")],
      onceClientIds: ["background:A"],
    });
    expect(repeat.error).toBeUndefined();
    expect(repeat.run?.status).toBe(RunStatus.COMPLETED);
    expect(repeat.duplicateOfRunId).toBe("done-1");
    expect(repeat.supersededRunId).toBe("");
    // The first run still owns the conversation and its history has the notice once.
    const conversation = await store.call("getConversation", { conversationId: "c1" });
    expect(conversation.activeRunId).toBe("done-1");
    expect(await history(conversation.headRevisionId)).toEqual(["user:sub-agent A finished"]);
    // A redelivery of the repeated run reports the same completed record.
    const again = await store.call("beginRun", { runId: "done-2", conversationId: "c1", memberId: "alice", onceClientIds: ["background:A"] });
    expect(again.run).toMatchObject({ status: RunStatus.COMPLETED, beginCount: 2 });
  });

  it("applies the start again when the run that took it failed, and treats imported history as taken", async () => {
    const failed = await store.call("beginRun", {
      runId: "try-1",
      conversationId: "c1",
      memberId: "alice",
      initialMessages: [userText("sub-agent B finished", "background:B")],
      onceClientIds: ["background:B"],
    });
    await store.call("finishRun", { runId: "try-1", status: RunStatus.FAILED, failureMessage: "provider down" });
    const retry = await store.call("beginRun", {
      runId: "try-2",
      conversationId: "c1",
      memberId: "alice",
      initialMessages: [userText("sub-agent B finished", "background:B")],
      onceClientIds: ["background:B"],
    });
    expect(failed.run?.status).toBe(RunStatus.RUNNING);
    expect(retry.run?.status).toBe(RunStatus.RUNNING);
    expect(retry.duplicateOfRunId).toBe("");

    // The client's own checkpoint holds the notice already (imported): a repeat does nothing.
    await store.call("importHistory", { conversationId: "c2", memberId: "alice", messages: [userText("sub-agent C finished", "background:C")] });
    const imported = await store.call("beginRun", {
      runId: "try-3",
      conversationId: "c2",
      memberId: "alice",
      initialMessages: [userText("sub-agent C finished", "background:C")],
      onceClientIds: ["background:C"],
    });
    expect(imported.run?.status).toBe(RunStatus.COMPLETED);
    expect(imported.duplicateOfRunId).toBe("imported");
    // The same client id without the once marking is an ordinary message (an edited user message reuses its id).
    const plain = await store.call("beginRun", { runId: "try-4", conversationId: "c2", memberId: "alice", initialMessages: [userText("edited", "background:C")] });
    expect(plain.run?.status).toBe(RunStatus.RUNNING);
  });

  it("finds a result committed for the same tool call (id, tool, arguments) in any run of the conversation", async () => {
    const begun = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "alice", initialMessages: [userText("fetch it")] });
    await store.call("createToolRound", {
      runId: "r1",
      roundId: "r1:round:1",
      expectedHeadRevisionId: begun.run!.startRevisionId,
      assistant: { content: [{ part: { case: "toolCall", value: { callId: "call_fetch", name: "WebFetch", argumentsJson: '{"url":"https://a.example/"}' } } }] },
      providerCallIndex: 1,
    });
    const call = { callId: "call_fetch", name: "WebFetch", argumentsJson: '{"url":"https://a.example/"}' };
    expect((await store.call("findToolResult", { conversationId: "c1", ...call })).found).toBe(false);
    await store.call("commitToolResult", { runId: "r1", roundId: "r1:round:1", callId: "call_fetch", content: "page text", isError: false });
    const found = await store.call("findToolResult", { conversationId: "c1", ...call });
    expect(found).toMatchObject({ found: true, content: "page text", isError: false, runId: "r1" });
    expect((await store.call("findToolResult", { conversationId: "other", ...call })).found).toBe(false);
    // The same id for another call (an endpoint that reuses ids) is not that result.
    expect((await store.call("findToolResult", { conversationId: "c1", ...call, argumentsJson: '{"url":"https://b.example/"}' })).found).toBe(false);
    expect((await store.call("findToolResult", { conversationId: "c1", ...call, name: "WebSearch" })).found).toBe(false);
  });
});
