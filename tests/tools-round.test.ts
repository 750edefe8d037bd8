/**
 * End to end: a tool round through the whole gateway. The mock LLM streams an
 * assistant response with several tool calls; the fake Cursor client runs the
 * execs like the IDE (in any order); store, run worker and provider gateway
 * are real. What a member would notice: the tool cards, the checkpoints, what
 * the model sees next, and what the store keeps.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { agent, type tools } from "@byok/cursor-protocol";
import type { CheckpointRecord, ExecContext, RunResult } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { afterUser, callIdsOf, textParts } from "@byok/test-support/stored-messages";
import {
  completedCard,
  enqueueChat,
  epochOf,
  execArgs,
  ExecGate,
  execResult,
  finishedOk,
  readSuccess,
  settledCheckpoint,
  toolUpdates,
} from "./tools-support.ts";

const THREE_CALLS_FIXTURE = new URL("./fixtures/openai-chat/tools-three-calls-turn1.sse", import.meta.url).pathname;
const FINAL_TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4omini-tool-call-turn2-text.sse");

// The calls of THREE_CALLS_FIXTURE.
const A = "call_Aq7kXy0rJm2PvN5sTb3cLw9e";
const B = "call_Bz4hWd8nQe1KoR6uVf2gMi7t";
const C = "call_Cx9jPl3sYa5GtU0mZc8dNq4r";
const FILES: Record<string, string> = { "/home/dev/project/src/a.ts": "export const a = 1;\n", "/home/dev/project/src/c.ts": "export const c = 3;\n" };

function rootJson(gwClientBlobs: { json(id: Uint8Array): unknown }, id: Uint8Array): { role: string; content: unknown; id?: string } {
  return gwClientBlobs.json(id) as { role: string; content: unknown; id?: string };
}

function roundCheckpoints(result: RunResult): CheckpointRecord[] {
  return result.checkpoints.filter((c) => c.beforeTurnEnded);
}

/** Answers the three execs once all arrived, in `order` (by tool call id), one after the other. */
function answerInOrder(order: readonly string[]): (ctx: ExecContext) => Promise<void> {
  const gate = new ExecGate(order.length);
  const turns = new Map<string, { go: Promise<void>; done: () => void }>();
  let previous = Promise.resolve();
  for (const id of order) {
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    turns.set(id, { go: previous, done });
    previous = finished;
  }
  return async (ctx) => {
    await gate.arrive(ctx);
    const callId = (ctx.exec.message.value as { toolCallId: string }).toolCallId;
    const turn = turns.get(callId);
    if (turn === undefined) throw new Error(`unexpected exec for ${callId}`);
    await turn.go;
    if (ctx.kind === "readArgs") {
      const { path } = execArgs<tools.ReadArgs>(ctx);
      await ctx.reply(readSuccess(path, FILES[path] ?? ""));
    } else if (ctx.kind === "grepArgs") {
      const { pattern } = execArgs<tools.GrepArgs>(ctx);
      await ctx.reply(
        execResult({
          case: "grepResult",
          value: {
            result: {
              case: "success",
              value: { pattern, path: "/home/dev/project", outputMode: "files_with_matches", workspaceResults: { "/home/dev/project": { result: { case: "files", value: { files: ["src/a.ts"], totalFiles: 1 } } } } },
            },
          },
        }),
      );
    } else {
      throw new Error(`unexpected exec ${ctx.kind}`);
    }
    turn.done();
  };
}

describe("tool round end to end", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("three calls answered B, A, C: pairs stored in arrival order, text on the first pair, same order to the model, one staged and one settled checkpoint before the next model call", async () => {
    gw.llm.enqueue({ kind: "fixture", file: THREE_CALLS_FIXTURE });
    gw.llm.enqueue({ kind: "fixture", file: FINAL_TEXT_FIXTURE });
    const client = gw.client();
    const chat = client.conversation();
    const run = chat.send("Compare a.ts and c.ts and find exports.", { modelId: gw.modelId, onExec: answerInOrder([B, A, C]), kv: { ackDelayMs: () => 15 } });
    const settledWatch = settledCheckpoint(run, gw, "the settled checkpoint of the tool round");
    const result = await finishedOk(run);
    await settledWatch.frame;
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);

    // ---- the model saw the tools (frozen PromptSpec), then the pairs in arrival order ----
    const [first, second] = gw.llm.requestsTo("openai-chat");
    const offered = (first!.body as { tools?: Array<{ function: { name: string } }> }).tools?.map((t) => t.function.name) ?? [];
    expect(offered).toContain("Read");
    expect(offered).toContain("Grep");
    expect((second!.body as { tools: unknown }).tools).toEqual((first!.body as { tools: unknown }).tools);
    const loop = afterLastUser(chatMessages(second));
    expect(loop.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool", "assistant", "tool"]);
    expect(loop.map((m) => m.tool_calls?.map((c) => c.id) ?? [m.tool_call_id])).toEqual([[B], [B], [A], [A], [C], [C]]);
    expect(textOf(loop[0]!.content)).toBe("I'll look at both files and search for exports.");
    expect(textOf(loop[2]!.content)).toBe("");
    expect(textOf(loop[4]!.content)).toBe("");
    expect(textOf(loop[3]!.content)).toBe(FILES["/home/dev/project/src/a.ts"]);
    expect(textOf(loop[1]!.content)).toContain("src/a.ts");

    // ---- the store: adjacent pairs B, A, C, the text only on B's, then the final answer ----
    const conversation = await gw.store("getConversation", { conversationId: chat.id });
    const history = await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId });
    const stored = afterUser(history.messages);
    expect(stored.map((m) => m.body.case)).toEqual(["assistant", "toolResult", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    expect(stored.slice(0, 6).map(callIdsOf)).toEqual([[B], [B], [A], [A], [C], [C]]);
    expect(stored.slice(0, 6).map(textParts)).toEqual([["I'll look at both files and search for exports."], [], [], [], [], []]);
    expect(stored[1]!.body.value).toMatchObject({ callId: B, toolName: "Grep", isError: false });

    // ---- checkpoints: one staged + one settled for the round, settled before the next model request ----
    const round = roundCheckpoints(result);
    expect(round.map((c) => c.kind), frames).toEqual(["staged", "settled"]);
    const [staged, settled] = round as [CheckpointRecord, CheckpointRecord];
    const pending = JSON.parse(staged.state.pendingToolCalls[0]!) as {
      role: string;
      content: Array<{ type: string; toolCallId?: string; text?: string }>;
      providerOptions: { cursor: { pendingToolCallStartedAtMs: number; pendingToolExecutionContracts: Record<string, { toolIdentifier: string }> } };
    };
    expect(pending.role).toBe("assistant");
    expect(pending.content.filter((p) => p.type === "tool-call").map((p) => p.toolCallId)).toEqual([A, B, C]);
    expect(pending.content.find((p) => p.type === "text")?.text).toBe("I'll look at both files and search for exports.");
    expect(Object.keys(pending.providerOptions.cursor.pendingToolExecutionContracts).sort()).toEqual([A, B, C].sort());
    expect(pending.providerOptions.cursor.pendingToolExecutionContracts[B]?.toolIdentifier).toBe("GREP");
    // Staged: roots unchanged (still ending with the user's message). Settled: + the three pairs, pending empty.
    const rootsOf = (c: CheckpointRecord) => c.state.rootPromptMessagesJson.map((r) => Buffer.from(r).toString("hex"));
    expect(rootJson(client.blobs, staged.state.rootPromptMessagesJson.at(-1)!).role).toBe("user");
    expect(rootsOf(settled).slice(0, rootsOf(staged).length)).toEqual(rootsOf(staged));
    const added = settled.state.rootPromptMessagesJson.slice(rootsOf(staged).length).map((id) => rootJson(client.blobs, id));
    expect(added.map((r) => `${r.role}:${r.role === "tool" ? r.id : ""}`)).toEqual(["assistant:", `tool:${B}`, "assistant:", `tool:${A}`, "assistant:", `tool:${C}`]);
    expect(settled.state.pendingToolCalls).toEqual([]);
    // read_paths advanced with the two successful Reads.
    expect([...settled.state.readPaths].sort()).toEqual(Object.keys(FILES).sort());
    expect(staged.state.readPaths).toEqual([]);
    // The settled checkpoint reached the client before the model was asked again.
    expect(settledWatch.requestsWhenSettled()).toBe(1);
    const settledEntry = result.timeline.find((e) => e.kind === "frame" && e.order === settled.order)!;
    expect(epochOf(settledEntry.at)).toBeLessThan(second!.receivedAt + 1);
    // The run's turn holds the tool calls as typed steps.
    const turn = fromBinary(agent.ConversationTurnStructureSchema, client.blobs.get(settled.state.turns.at(-1)!)!);
    const steps = turn.turn.case === "agentConversationTurn" ? turn.turn.value.steps.map((id) => fromBinary(agent.ConversationStepSchema, client.blobs.get(id)!)) : [];
    const stepCalls = steps.flatMap((s) => (s.message.case === "toolCall" ? [s.message.value.toolCallId] : []));
    expect(stepCalls).toEqual([B, A, C]);

    // ---- the tool cards: partial (args streaming) -> started -> completed with a typed result ----
    const updates = toolUpdates(result);
    for (const id of [A, B, C]) {
      const mine = updates.filter((u) => u.callId === id);
      const kinds = mine.map((u) => u.case);
      expect(kinds[0], `${id}: ${kinds.join(",")}`).toBe("partialToolCall");
      expect(kinds.filter((k) => k === "partialToolCall").length, kinds.join(",")).toBeGreaterThan(2);
      expect(kinds.filter((k) => k !== "partialToolCall")).toEqual(["toolCallStarted", "toolCallCompleted"]);
      const started = mine.find((u) => u.case === "toolCallStarted")!;
      // Nothing executed before the model's response was complete and staged.
      expect(started.order).toBeGreaterThan(staged.order);
    }
    const argsText = updates
      .filter((u) => u.callId === A && u.update.case === "partialToolCall")
      .map((u) => (u.update.case === "partialToolCall" ? u.update.value.argsTextDelta : ""))
      .join("");
    expect(JSON.parse(argsText)).toEqual({ path: "/home/dev/project/src/a.ts" });
    const cardA = completedCard(result, A);
    expect(cardA?.tool.case).toBe("readToolCall");
    expect(cardA?.tool.case === "readToolCall" && cardA.tool.value.result?.result.case).toBe("success");
    expect(cardA?.completedAtMs).toBeGreaterThanOrEqual(cardA?.startedAtMs ?? Number.MAX_SAFE_INTEGER);
    expect(cardA?.startedAtMs).toBe(BigInt(pending.providerOptions.cursor.pendingToolCallStartedAtMs));
    const completedOrder = updates.filter((u) => u.case === "toolCallCompleted").map((u) => u.callId);
    expect(completedOrder).toEqual([B, A, C]);
    // Wire ids: one exec per call, distinct, non-zero.
    const execIds = result.timeline.flatMap((e) => (e.kind === "frame" && e.message.message.case === "execServerMessage" ? [e.message.message.value.id] : []));
    expect(execIds).toHaveLength(3);
    expect(new Set(execIds).size).toBe(3);
    expect(execIds.every((id) => id > 0)).toBe(true);

    // ---- the next turn starts from the settled state: the store recognises the whole history ----
    gw.llm.enqueue({ kind: "fixture", file: FINAL_TEXT_FIXTURE });
    const next = await finishedOk(chat.send("Thanks, anything else?", { modelId: gw.modelId }));
    expect(next.violations, next.describe()).toEqual([]);
    const third = gw.llm.requestsTo("openai-chat")[2];
    const before = chatMessages(second);
    const again = chatMessages(third);
    expect(JSON.stringify(again.slice(0, before.length))).toBe(JSON.stringify(before));
    const nextRun = await gw.store("getRun", { runId: next.requestId });
    const firstRun = await gw.store("getRun", { runId: result.requestId });
    const chain = await gw.store("getRevisionMessages", { revisionId: nextRun.run!.headRevisionId });
    expect(chain.revisionChain).toContain(firstRun.run!.headRevisionId);
  });

  it("keeps every model request a byte prefix of the next across a three-call tool loop", async () => {
    const files = ["/home/dev/project/one.ts", "/home/dev/project/two.ts", "/home/dev/project/three.ts"];
    files.forEach((path, i) => enqueueChat(gw, { id: `chatcmpl-loop-${i}`, text: i === 0 ? "Reading." : undefined, calls: [{ id: `call_loop_${i}`, name: "Read", args: { path } }] }));
    enqueueChat(gw, { id: "chatcmpl-loop-final", text: "All three files are tiny." });
    const result = await finishedOk(
      gw.client().conversation().send("Read the three files one by one.", {
        modelId: gw.modelId,
        onExec: { readArgs: (ctx) => ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, `// ${execArgs<tools.ReadArgs>(ctx).path}\n`)) },
      }),
    );
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toContain("All three files are tiny.");

    const requests = gw.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(4);
    for (let i = 0; i + 1 < requests.length; i++) {
      const now = requests[i]!.body as { messages: unknown[]; tools: unknown; model: unknown };
      const next = requests[i + 1]!.body as { messages: unknown[]; tools: unknown; model: unknown };
      // Byte-level prefix of the message list, identical tools and model.
      const nowText = JSON.stringify(now.messages);
      const nextText = JSON.stringify(next.messages);
      expect(nextText.startsWith(nowText.slice(0, -1))).toBe(true);
      expect(next.messages.length).toBe(now.messages.length + 2);
      expect(JSON.stringify(next.tools)).toBe(JSON.stringify(now.tools));
      expect(next.model).toBe(now.model);
    }
    // Two checkpoints per round (staged, settled) before the final tail.
    expect(roundCheckpoints(result).map((c) => c.kind)).toEqual(["staged", "settled", "staged", "settled", "staged", "settled"]);
    expect(result.checkpoints.at(-1)?.state.readPaths).toEqual(files);
  });
});
