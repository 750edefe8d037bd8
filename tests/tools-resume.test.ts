/**
 * End to end: the stream drops while a tool round is staged; the IDE resumes
 * from that staged checkpoint (resume_action, pending_tool_calls = the
 * assistant with its calls). The gateway re-creates the round from the JSON
 * (same call ids, same pendingToolCallStartedAtMs) and runs exactly those
 * tools again before it asks the model anything.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStatus } from "@byok/contracts";
import type { tools } from "@byok/cursor-protocol";
import { waitFor } from "@byok/test-support/infra";
import type { ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { afterLastUser, chatMessages } from "@byok/test-support/chat-requests";
import { enqueueChat, execArgs, ExecGate, finishedOk, readSuccess, toolUpdates } from "./tools-support.ts";

interface PendingJson {
  content: Array<{ type: string; toolCallId?: string }>;
  providerOptions: { cursor: { pendingToolCallStartedAtMs: number } };
}

describe("resume a staged tool round end to end", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("re-dispatches exactly the pending calls, with their ids and start time, before any model request", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-resume-1",
      text: "Reading both.",
      calls: [
        { id: "call_resume_a", name: "Read", args: { path: "/home/dev/project/a.ts" } },
        { id: "call_resume_b", name: "Read", args: { path: "/home/dev/project/b.ts" } },
      ],
    });
    const chat = gw.client().conversation();

    // ---- turn 1: the round is staged and its execs arrive, then the IDE window goes away ----
    const gate = new ExecGate(2);
    const first = chat.send("Read a.ts and b.ts", { modelId: gw.modelId, onExec: { readArgs: (ctx: ExecContext) => void gate.arrive(ctx) } });
    await gate.all();
    await first.waitForFrame((m) => m.message.case === "conversationCheckpointUpdate" && m.message.value.pendingToolCalls.length === 1, "the staged checkpoint");
    first.disconnect();
    const dropped = await first.finished;
    expect(dropped.end.kind, dropped.describe()).toBe("broken");
    await waitFor(async () => (await gw.store("getRun", { runId: dropped.requestId })).run?.status === RunStatus.CANCELLED, "turn 1 cancelled", 10_000);
    expect(chat.resumePoint?.pendingToolCalls).toHaveLength(1);
    const stagedBefore = JSON.parse(chat.resumePoint!.pendingToolCalls[0]!) as PendingJson;
    const startedAt = stagedBefore.providerOptions.cursor.pendingToolCallStartedAtMs;
    expect(gw.llm.requestsTo("openai-chat")).toHaveLength(1);

    // ---- turn 2: resume from the staged checkpoint ----
    enqueueChat(gw, { id: "chatcmpl-resume-2", text: "Both files are empty modules." });
    const rerun: Array<{ callId: string; modelRequests: number }> = [];
    const resumed = await finishedOk(
      chat.resume({
        modelId: gw.modelId,
        onExec: {
          readArgs: async (ctx: ExecContext) => {
            const args = execArgs<tools.ReadArgs>(ctx);
            rerun.push({ callId: args.toolCallId, modelRequests: gw.llm.requestsTo("openai-chat").length });
            await ctx.reply(readSuccess(args.path, `// ${args.path}\n`));
          },
        },
      }),
    );
    expect(resumed.violations, resumed.describe()).toEqual([]);
    expect(resumed.text).toBe("Both files are empty modules.");

    // Exactly the pending calls ran again, before the model was asked anything.
    expect(rerun.map((r) => r.callId).sort()).toEqual(["call_resume_a", "call_resume_b"]);
    expect(rerun.every((r) => r.modelRequests === 1)).toBe(true);
    // Same call ids and start time in the new staged checkpoint and on the cards.
    const staged = resumed.checkpoints.find((c) => c.kind === "staged" && c.beforeTurnEnded);
    expect(staged, resumed.describe()).toBeDefined();
    const stagedAgain = JSON.parse(staged!.state.pendingToolCalls[0]!) as PendingJson;
    expect(stagedAgain.content.filter((p) => p.type === "tool-call").map((p) => p.toolCallId)).toEqual(["call_resume_a", "call_resume_b"]);
    expect(stagedAgain.providerOptions.cursor.pendingToolCallStartedAtMs).toBe(startedAt);
    const startedCards = toolUpdates(resumed).filter((u) => u.case === "toolCallStarted");
    expect(startedCards.map((u) => u.callId).sort()).toEqual(["call_resume_a", "call_resume_b"]);
    for (const u of startedCards) expect(u.update.case === "toolCallStarted" && u.update.value.toolCall?.startedAtMs).toBe(BigInt(startedAt));

    // The model then saw the round once, in full, after turn 1's question.
    const requests = gw.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(2);
    const loop = afterLastUser(chatMessages(requests[1]));
    expect(loop.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool"]);
    expect(loop.filter((m) => m.role === "tool").map((m) => m.tool_call_id).sort()).toEqual(["call_resume_a", "call_resume_b"]);
    expect(JSON.stringify(chatMessages(requests[1]).slice(0, chatMessages(requests[0]).length))).toBe(JSON.stringify(chatMessages(requests[0])));
    const run = { run: await gw.endedRun(resumed.requestId) };
    expect(run.run?.status).toBe(RunStatus.COMPLETED);
  });
});
