/**
 * End to end (real Postgres, NATS, HTTP): a conversation driven past a small
 * context window (8,000 tokens, chosen in Cursor's context picker) by large
 * tool outputs. The summary call comes before the call that would overflow;
 * the call after it holds system + summary + request context + the newest
 * turn's last round; the settled checkpoint references only acknowledged blobs
 * and carries the summary fields; the next turn from that checkpoint reuses
 * the compacted revision and extends the previous request byte for byte.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { clientSummary, readsOf, revisionCount, updateCases } from "./long-sessions-support.ts";
import { chatMessages, textOf } from "@byok/test-support/chat-requests";
import { enqueueChat, finishedOk } from "./tools-support.ts";

const SUMMARY = "The user asked to read a.ts, b.ts and c.ts. a.ts and b.ts were read; c.ts is open.";
const read = (id: string, file: string) => ({ id, name: "Read", args: { path: `/home/dev/project/${file}` } });

describe("auto-compaction past a small context window", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway({ model: { contextWindow: 128_000 } });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("summarizes before the call that would overflow, continues on system + summary + tail, and the next turn keeps prefix stability", async () => {
    // Reported input tokens grow as a real endpoint's would; the third round pushes the estimate over 7,200 (8,000 - 10 %).
    enqueueChat(gw, { id: "c1", calls: [read("call_a", "a.ts")], usage: { prompt: 3_000, completion: 20 } });
    enqueueChat(gw, { id: "c2", calls: [read("call_b", "b.ts")], usage: { prompt: 4_300, completion: 20 } });
    enqueueChat(gw, { id: "c3", calls: [read("call_c", "c.ts")], usage: { prompt: 6_500, completion: 20 } });
    enqueueChat(gw, { id: "summary", text: SUMMARY, usage: { prompt: 2_600, completion: 40 } });
    enqueueChat(gw, { id: "c4", text: "All three files are read.", usage: { prompt: 5_200, completion: 10 } });

    const client = gw.client();
    const chat = client.conversation();
    const model = { via: "requested_model" as const, modelId: gw.modelId, parameters: { context: "8k" } };
    const result = await finishedOk(chat.send("Read a.ts, b.ts and c.ts.", { model, onExec: readsOf(70) }));
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toContain("All three files are read.");

    const requests = gw.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(5);
    // ---- the summary call (4th): our prompt, no tools, no reasoning, <= 4096 out, ends on a user message ----
    const summaryCall = requests[3]!.body as { tools?: unknown; reasoning_effort?: unknown; max_completion_tokens?: number; messages: Array<{ role: string; content: unknown }> };
    expect(summaryCall.tools).toBeUndefined();
    expect(summaryCall.reasoning_effort).toBeUndefined();
    expect(summaryCall.max_completion_tokens).toBeLessThanOrEqual(4096);
    expect(summaryCall.messages[0]?.role).toBe("system");
    expect(textOf(summaryCall.messages[0]?.content)).toContain("working memory of a coding agent");
    expect(summaryCall.messages.at(-1)?.role).toBe("user");
    expect(textOf(summaryCall.messages.at(-1)?.content)).toContain("Summarize the conversation above");
    expect(JSON.stringify(summaryCall.messages)).toContain("[tool call Read");

    // ---- the call after it: system + summary + request context + the turn's message + the newest round ----
    const after = chatMessages(requests[4]);
    expect(after.map((m) => m.role)).toEqual(["system", "user", "user", "user", "assistant", "tool"]);
    expect(textOf(after[1]!.content)).toContain(`<conversation_summary>`);
    expect(textOf(after[1]!.content)).toContain(SUMMARY);
    expect(textOf(after[2]!.content)).toContain("<user_info>");
    expect(textOf(after[3]!.content)).toContain("Read a.ts, b.ts and c.ts.");
    expect(after[4]!.tool_calls?.map((c) => c.id)).toEqual(["call_c"]);
    expect(after[5]!.tool_call_id).toBe("call_c");
    expect((requests[4]!.body as { tools?: unknown[] }).tools?.length).toBeGreaterThan(0);
    // Before the reset, every call extended the previous one.
    expect(chatMessages(requests[2]).slice(0, chatMessages(requests[1]).length)).toEqual(chatMessages(requests[1]));

    // ---- Cursor saw the summary, and the settled checkpoint carries the summary fields ----
    const cases = updateCases(result);
    expect(cases).toContain("summaryStarted");
    expect(cases.indexOf("summaryStarted")).toBeLessThan(cases.indexOf("summaryCompleted"));
    expect(cases).toContain("summary");
    const settled = result.lastSettled!;
    expect(settled.selfSummaryCount).toBe(1);
    expect(clientSummary(gw, client, settled)).toBe(SUMMARY);
    expect(settled.summaryArchives).toHaveLength(1);
    const archive = fromBinary(agent.ConversationSummaryArchiveSchema, client.blobs.get(settled.summaryArchive!)!);
    expect(archive.summary).toBe(SUMMARY);
    expect(Buffer.from(archive.summaryMessage).equals(Buffer.from(settled.rootPromptMessagesJson[1]!))).toBe(true);
    // Roots: system, summary, context, the user's message, the newest round, the answer.
    expect(settled.rootPromptMessagesJson.map((id) => (client.blobs.json(id) as { role: string }).role)).toEqual(["system", "user", "user", "user", "assistant", "tool", "assistant"]);
    expect(settled.tokenDetails?.maxTokens).toBe(8000);

    // ---- the store: a new branch that records the head it replaced; the old chain untouched ----
    const compacted = await gw.sql<{ id: string; compacted_from_id: string; parent_id: string | null }>(
      "SELECT id, compacted_from_id, parent_id FROM revisions WHERE compacted_from_id IS NOT NULL",
    );
    expect(compacted).toHaveLength(1);
    expect(compacted[0]!.parent_id).toBeNull();
    const replaced = await gw.store("getRevisionMessages", { revisionId: compacted[0]!.compacted_from_id });
    expect(replaced.messages.filter((m) => m.body.case === "toolResult")).toHaveLength(3);

    // ---- turn 2 from the compacted checkpoint: the import reuses it; the request extends call 5 byte for byte ----
    const revisionsBefore = await revisionCount(gw);
    enqueueChat(gw, { id: "c5", text: "Nothing else.", usage: { prompt: 5_300, completion: 5 } });
    const second = await finishedOk(chat.send("Anything else?", { model }));
    expect(second.violations, second.describe()).toEqual([]);
    // run.begin (the question) and the answer; the import found the stored history by digest.
    expect(await revisionCount(gw)).toBe(revisionsBefore + 2);
    const [call5, call6] = gw.llm.requestsTo("openai-chat").slice(4);
    const previous = call5!.rawBody;
    expect(call6!.rawBody.startsWith(previous.slice(0, -2))).toBe(true);
    expect(chatMessages(call6).map((m) => m.role)).toEqual(["system", "user", "user", "user", "assistant", "tool", "assistant", "user"]);
    expect(second.lastSettled?.selfSummaryCount).toBe(1);
    expect(second.lastSettled?.rootPromptMessagesJson.slice(0, settled.rootPromptMessagesJson.length)).toEqual(settled.rootPromptMessagesJson);
  });
});
