/**
 * The tool scenario on the real client path: the fake Cursor client reaches
 * https://api2.cursor.sh through the edge proxy (CONNECT, member key, team CA)
 * and runs a tool round like the IDE: a Read and a Shell whose output streams
 * into its card while the command runs, then the final answer. The same order
 * and checkpoint rules as tests/tools-round.test.ts hold through the proxy.
 */
import { performance } from "node:perf_hooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { agent, tools } from "@byok/cursor-protocol";
import type { CheckpointRecord, CursorRun, ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { afterUser, callIdsOf, textParts } from "@byok/test-support/stored-messages";
import {
  completedCard,
  enqueueChat,
  epochOf,
  execArgs,
  execResult,
  ExecGate,
  finishedOk,
  readSuccess,
  settledCheckpoint,
  toolUpdates,
} from "./tools-support.ts";

const READ = "call_edge_read";
const SHELL = "call_edge_shell";
const FILE = "/home/dev/project/src/config.ts";
const FILE_TEXT = "export const port = 8080;\n";
const STDOUT = "build ok: 3 modules\n";
const ROUND_TEXT = "Reading the config and building.";
const FINAL_TEXT = "The config sets port 8080 and the build passes.";

function isShellStdout(message: agent.AgentServerMessage, text: string): boolean {
  if (message.message.case !== "interactionUpdate") return false;
  const update = message.message.value.message;
  if (update.case !== "toolCallDelta") return false;
  const delta = update.value.toolCallDelta?.delta;
  return delta?.case === "shellToolCallDelta" && delta.value.delta.case === "stdout" && delta.value.delta.value.content === text;
}

describe("tool round through the edge proxy", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway({ edgeProxy: true });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("a Read and a streaming Shell, then the answer: cards, execs, staged/settled checkpoints and stored pairs in arrival order", async () => {
    const edge = gw.edge!;
    const bob = await edge.createMember("bob");
    enqueueChat(gw, {
      id: "chatcmpl-edge-tools-1",
      text: ROUND_TEXT,
      calls: [
        { id: SHELL, name: "Shell", args: { command: "npm run build", description: "Build the project" } },
        { id: READ, name: "Read", args: { path: FILE } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-edge-tools-2", text: FINAL_TEXT });

    // The IDE runs both at once: the Shell prints, the Read answers once that output shows in the card, then the Shell exits.
    const gate = new ExecGate(2);
    let readAnswered!: () => void;
    const readDone = new Promise<void>((resolve) => (readAnswered = resolve));
    let exitSentAt: number | undefined;
    const chat = edge.client({ name: "bob", key: bob.key }).conversation();
    const run: CursorRun = chat.send("Check the config and build.", {
      modelId: gw.modelId,
      kv: { ackDelayMs: () => 10 },
      onExec: {
        shellStreamArgs: async (ctx: ExecContext) => {
          await gate.arrive(ctx);
          const event = (e: MessageInitShape<typeof tools.ShellStreamSchema>["event"]) => ctx.result(execResult({ case: "shellStream", value: { event: e } }));
          await event({ case: "start", value: {} });
          await event({ case: "stdout", value: { data: STDOUT } });
          await readDone;
          exitSentAt = performance.now();
          await event({ case: "exit", value: { code: 0, cwd: "/home/dev/project" } });
          await ctx.close();
        },
        readArgs: async (ctx: ExecContext) => {
          await gate.arrive(ctx);
          await run.waitForFrame((m) => isShellStdout(m, STDOUT), "the Shell output in its card");
          await ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, FILE_TEXT));
          readAnswered();
        },
      },
    });
    const settledWatch = settledCheckpoint(run, gw, "the settled checkpoint of the round");
    const result = await finishedOk(run);
    await settledWatch.frame;
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    expect(result.text).toBe(ROUND_TEXT + FINAL_TEXT);

    // ---- the model: tools offered, then the pairs in arrival order (Read first, then Shell) ----
    const [first, second] = gw.llm.requestsTo("openai-chat");
    const offered = (first!.body as { tools?: Array<{ function: { name: string } }> }).tools?.map((t) => t.function.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(["Read", "Shell"]));
    const loop = afterLastUser(chatMessages(second));
    expect(loop.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool"]);
    expect(loop.map((m) => m.tool_calls?.map((c) => c.id) ?? [m.tool_call_id])).toEqual([[READ], [READ], [SHELL], [SHELL]]);
    expect(textOf(loop[0]!.content)).toBe(ROUND_TEXT);
    expect(textOf(loop[2]!.content)).toBe("");
    expect(textOf(loop[1]!.content)).toBe(FILE_TEXT);
    expect(textOf(loop[3]!.content)).toContain(STDOUT.trim());

    // ---- the store: adjacent pairs in arrival order, the text on the first pair only, then the answer ----
    const conversation = await gw.store("getConversation", { conversationId: chat.id });
    expect(conversation.memberId).toBe(bob.memberId);
    const history = await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId });
    const stored = afterUser(history.messages);
    expect(stored.map((m) => m.body.case)).toEqual(["assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    expect(stored.slice(0, 4).map(callIdsOf)).toEqual([[READ], [READ], [SHELL], [SHELL]]);
    expect(stored.slice(0, 4).map(textParts)).toEqual([[ROUND_TEXT], [], [], []]);
    expect(textParts(stored[4]!)).toEqual([FINAL_TEXT]);

    // ---- checkpoints: one staged + one settled for the round, the settled one before the next model call ----
    const round = result.checkpoints.filter((c) => c.beforeTurnEnded);
    expect(round.map((c) => c.kind), frames).toEqual(["staged", "settled"]);
    const [staged, settled] = round as [CheckpointRecord, CheckpointRecord];
    const pending = JSON.parse(staged.state.pendingToolCalls[0]!) as { role: string; content: Array<{ type: string; toolCallId?: string }> };
    expect(pending.role).toBe("assistant");
    expect(pending.content.filter((p) => p.type === "tool-call").map((p) => p.toolCallId)).toEqual([SHELL, READ]);
    const rootsOf = (c: CheckpointRecord) => c.state.rootPromptMessagesJson.map((r) => Buffer.from(r).toString("hex"));
    expect(rootsOf(settled).slice(0, rootsOf(staged).length)).toEqual(rootsOf(staged));
    const added = settled.state.rootPromptMessagesJson.slice(rootsOf(staged).length).map((id) => chat.client.blobs.json(id) as { role: string; id?: string });
    expect(added.map((r) => `${r.role}:${r.role === "tool" ? r.id : ""}`)).toEqual(["assistant:", `tool:${READ}`, "assistant:", `tool:${SHELL}`]);
    expect(settled.state.pendingToolCalls).toEqual([]);
    expect(settled.state.readPaths).toEqual([FILE]);
    expect(settledWatch.requestsWhenSettled()).toBe(1);
    const settledEntry = result.timeline.find((e) => e.kind === "frame" && e.order === settled.order)!;
    expect(epochOf(settledEntry.at)).toBeLessThan(second!.receivedAt + 1);

    // ---- the cards: nothing started before the staged checkpoint; Shell output streamed before its exit ----
    const updates = toolUpdates(result);
    for (const id of [READ, SHELL]) {
      const kinds = updates.filter((u) => u.callId === id).map((u) => u.case);
      expect(kinds[0], `${id}: ${kinds.join(",")}`).toBe("partialToolCall");
      expect(kinds.filter((k) => k !== "partialToolCall" && k !== "toolCallDelta"), kinds.join(",")).toEqual(["toolCallStarted", "toolCallCompleted"]);
      expect(updates.find((u) => u.callId === id && u.case === "toolCallStarted")!.order).toBeGreaterThan(staged.order);
    }
    const stdoutDelta = updates.find((u) => u.callId === SHELL && u.case === "toolCallDelta")!;
    const shellCompleted = updates.find((u) => u.callId === SHELL && u.case === "toolCallCompleted")!;
    expect(stdoutDelta.at).toBeLessThan(exitSentAt!);
    expect(stdoutDelta.order).toBeLessThan(shellCompleted.order);
    expect(updates.filter((u) => u.case === "toolCallCompleted").map((u) => u.callId)).toEqual([READ, SHELL]);
    const shellCard = completedCard(result, SHELL);
    const shellResult = shellCard?.tool.case === "shellToolCall" ? shellCard.tool.value.result : undefined;
    expect(shellResult?.result.case === "success" && shellResult.result.value).toMatchObject({ exitCode: 0, stdout: STDOUT });
    const readCard = completedCard(result, READ);
    expect(readCard?.tool.case === "readToolCall" && readCard.tool.value.result?.result.case).toBe("success");
    const execIds = result.timeline.flatMap((e) => (e.kind === "frame" && e.message.message.case === "execServerMessage" ? [e.message.message.value.id] : []));
    expect(execIds).toHaveLength(2);
    expect(new Set(execIds).size).toBe(2);
  });
});
