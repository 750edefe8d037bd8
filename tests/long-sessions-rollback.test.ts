/**
 * End to end (real Postgres, NATS, HTTP): Cursor restores an earlier
 * checkpoint and the member sends a new message. The run starts from that
 * checkpoint's revision as the base of a new branch: the model sees turn 1 and
 * the new message, not turn 2, and the old branch stays in the store as it
 * was. Rolling back to a checkpoint from before a compaction works the same
 * way: the compacted branch stays, the new branch has no summary.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { errorFixture } from "@byok/test-support/fixtures";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { chatMessages, textOf } from "@byok/test-support/chat-requests";
import { enqueueChat, finishedOk } from "./tools-support.ts";

async function historyTexts(gw: GatewayHarness, revisionId: string): Promise<string[]> {
  const history = await gw.store("getRevisionMessages", { revisionId });
  return history.messages.map((m) =>
    m.body.case === "toolResult" ? `tool:${m.body.value.content}` : `${m.body.case}:${(m.body.value?.content ?? []).map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("")}`,
  );
}

async function runHeads(gw: GatewayHarness, conversationId: string): Promise<Array<{ id: string; start_revision_id: string; head_revision_id: string }>> {
  return gw.sql("SELECT id, start_revision_id, head_revision_id FROM runs WHERE conversation_id = $1 ORDER BY created_at", [conversationId]);
}

/** The ancestors of a revision (itself included), from the store. */
async function chainOf(gw: GatewayHarness, revisionId: string): Promise<string[]> {
  return (await gw.store("getRevisionMessages", { revisionId })).revisionChain;
}

describe("rollback to an earlier checkpoint", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("starts a new branch from the restored checkpoint's revision; the model sees turn 1 and the new message; the old branch stays", async () => {
    const chat = gw.client().conversation();
    enqueueChat(gw, { id: "a1", text: "answer one" });
    await finishedOk(chat.send("turn one", { modelId: gw.modelId }));
    const afterTurn1 = chat.state;
    enqueueChat(gw, { id: "a2", text: "answer two" });
    await finishedOk(chat.send("turn two", { modelId: gw.modelId }));
    const [, run2] = await runHeads(gw, chat.id);
    const oldBranch = await historyTexts(gw, run2!.head_revision_id);

    // Cursor restores the checkpoint after turn 1; the member writes something else.
    chat.state = afterTurn1;
    enqueueChat(gw, { id: "a3", text: "answer three" });
    const third = await finishedOk(chat.send("turn two, rewritten", { modelId: gw.modelId }));
    expect(third.violations).toEqual([]);

    const request = chatMessages(gw.llm.requestsTo("openai-chat")[2]);
    const texts = request.map((m) => textOf(m.content));
    expect(texts.join("\n")).toContain("turn one");
    expect(texts.join("\n")).toContain("answer one");
    expect(texts.join("\n")).toContain("turn two, rewritten");
    expect(texts.join("\n")).not.toContain("answer two");
    expect(texts.some((t) => t.includes("turn two") && !t.includes("rewritten"))).toBe(false);

    // Two branches: both grow from turn 1's revision; the old one is unchanged.
    const [run1, , run3] = await runHeads(gw, chat.id);
    expect(await historyTexts(gw, run2!.head_revision_id)).toEqual(oldBranch);
    const oldChain = await chainOf(gw, run2!.head_revision_id);
    const newChain = await chainOf(gw, run3!.head_revision_id);
    expect(oldChain).toContain(run1!.head_revision_id);
    expect(newChain).toContain(run1!.head_revision_id);
    expect(newChain).not.toContain(run2!.head_revision_id);
    expect(new Set(newChain).has(run2!.start_revision_id)).toBe(false);
  });

  it("composes with compaction: a rollback to a checkpoint from before a compaction leaves the compacted branch and builds on the old history", async () => {
    const chat = gw.client().conversation();
    enqueueChat(gw, { id: "a1", text: "answer one" });
    await finishedOk(chat.send("turn one", { modelId: gw.modelId }));
    const beforeCompaction = chat.state;
    // Turn 2 overflows once: compaction, then the retry answers.
    gw.llm.enqueue(errorFixture("openai-chat", "openai-context-length-exceeded.handwritten.error.json"));
    enqueueChat(gw, { id: "summary", text: "They asked turn one; it was answered." });
    enqueueChat(gw, { id: "a2", text: "answer two" });
    const second = await finishedOk(chat.send("turn two", { modelId: gw.modelId }));
    expect(second.lastSettled?.selfSummaryCount).toBe(1);
    const compacted = await gw.sql<{ id: string }>("SELECT id FROM revisions WHERE compacted_from_id IS NOT NULL");
    expect(compacted).toHaveLength(1);
    const [, run2] = await runHeads(gw, chat.id);
    const compactedBranch = await historyTexts(gw, run2!.head_revision_id);
    expect(compactedBranch[0]).toContain("<conversation_summary>");

    chat.state = beforeCompaction;
    enqueueChat(gw, { id: "a3", text: "answer three" });
    const third = await finishedOk(chat.send("turn two, rewritten", { modelId: gw.modelId }));
    expect(third.lastSettled?.selfSummaryCount ?? 0).toBe(0);
    const request = gw.llm.requestsTo("openai-chat").at(-1);
    expect(request?.rawBody).not.toContain("conversation_summary");
    const texts = chatMessages(request).map((m) => textOf(m.content)).join("\n");
    expect(texts).toContain("answer one");
    expect(texts).toContain("turn two, rewritten");
    expect(texts).not.toContain("answer two");

    // The compacted branch is still there, unchanged; the new branch does not contain it.
    expect(await historyTexts(gw, run2!.head_revision_id)).toEqual(compactedBranch);
    const [run1, , run3] = await runHeads(gw, chat.id);
    const newChain = await chainOf(gw, run3!.head_revision_id);
    expect(newChain).toContain(run1!.head_revision_id);
    expect(newChain).not.toContain(compacted[0]!.id);
  });
});
