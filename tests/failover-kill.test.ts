/**
 * Failure tests with a real crash: the run worker is a child process
 * (`node services/run-worker/src/main.ts`) and gets `kill -9` while it owns a
 * run. The rest of the gateway runs in-process with no worker of its own;
 * after the kill a second worker starts, JetStream redelivers the run (short
 * ack wait), and the new owner continues from the store. What a member sees:
 * the turn still completes, no tool runs twice in the IDE, the round is
 * projected once, and the store keeps every message exactly once; a model
 * call the dead worker had open is aborted upstream.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "@byok/contracts";
import { RunStatus } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import { isTextDelta } from "@byok/test-support/fake-cursor";
import { afterUser, callIdsOf, storedHistory } from "@byok/test-support/stored-messages";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { TestProcesses } from "./failover-support.ts";
import { afterLastUser, chatMessages } from "@byok/test-support/chat-requests";
import { chatStream, enqueueChat, finishedOk, holdReads } from "./tools-support.ts";

/** Redelivery within ~2 s of the crash instead of the default 30 s. */
const FAST_REDELIVERY = { RUN_ACK_WAIT_MS: "2000", RUN_WORKING_INTERVAL_MS: "500" };
/** The provider gateway notices a dead caller within ~2.5 s instead of ~7 s. */
const FAST_CALLER_PROBES = { PROVIDER_CALLER_PROBE_MS: "250" };

const CALL_A = "call_kill_read_a";
const CALL_B = "call_kill_read_b";

function assistantText(message: Message | undefined): string {
  if (message?.body.case !== "assistant") return "";
  return message.body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("");
}

describe("run worker killed with SIGKILL", () => {
  let gw: GatewayHarness;
  const processes = new TestProcesses();
  beforeEach(async () => {
    gw = await startGateway({ workers: 0, env: { runWorker: FAST_REDELIVERY, providerGateway: FAST_CALLER_PROBES } });
  });
  afterEach(async () => {
    try {
      await processes.stopAll();
    } finally {
      await gw.stop();
    }
  });

  it("mid tool round: the next worker finishes the round; each tool runs once, each message is stored once, one settled checkpoint", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-kill-round-1",
      text: "Reading both files.",
      calls: [
        { id: CALL_A, name: "Read", args: { path: "/home/dev/project/a.ts" } },
        { id: CALL_B, name: "Read", args: { path: "/home/dev/project/b.ts" } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-kill-round-2", text: "Both files read despite the crash." });
    const doomed = await processes.startRunWorker(gw, "doomed-round-worker");

    // B's answer waits until the round is in the next worker's hands.
    const reads = holdReads((path) => `// ${path}\n`, (toolCallId) => toolCallId === CALL_B);
    const chat = gw.client().conversation();
    const run = chat.send("Read a and b.", { modelId: gw.modelId, onExec: reads.onExec });

    // The child owns the round: A's pair is committed, B is running in the IDE.
    await waitFor(async () => (await gw.store("getOpenToolRound", { runId: run.requestId })).round?.results.length === 1, "A's result committed by the child", 10_000);
    await waitFor(() => reads.executed.length === 2, "both execs in the IDE", 10_000);
    const exit = await doomed.kill("SIGKILL");
    expect(exit.signal).toBe("SIGKILL");

    const successor = await gw.startWorker();
    await waitFor(() => successor.runsTaken() > 0, "the successor to take the redelivered run", 10_000);
    reads.release();

    const result = await finishedOk(run);
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    expect(result.text).toContain("Both files read despite the crash.");
    // Each tool ran once in the IDE, although the round was handed to another worker.
    expect([...reads.executed].sort()).toEqual([CALL_A, CALL_B]);
    const execFrames = result.timeline.filter((e) => e.kind === "frame" && e.message.message.case === "execServerMessage");
    expect(execFrames, frames).toHaveLength(2);
    // The round was projected once: one staged and one settled checkpoint before the turn ended.
    expect(result.checkpoints.filter((c) => c.beforeTurnEnded).map((c) => c.kind), frames).toEqual(["staged", "settled"]);
    const settled = result.checkpoints.find((c) => c.kind === "settled")!;
    const roots = settled.state.rootPromptMessagesJson.map((id) => chat.client.blobs.json(id) as { role: string; id?: string });
    expect(roots.filter((r) => r.role === "tool").map((r) => r.id)).toEqual([CALL_A, CALL_B]);

    // The store: each pair once, in arrival order, then one final answer.
    const stored = afterUser(await storedHistory(gw, chat.id));
    expect(stored.map((m) => m.body.case)).toEqual(["assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    expect(stored.map(callIdsOf)).toEqual([[CALL_A], [CALL_A], [CALL_B], [CALL_B], []]);
    expect(assistantText(stored[4])).toBe("Both files read despite the crash.");

    // The completed model call was not made again: one call for the round, one for the answer.
    const requests = gw.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(2);
    const loop = afterLastUser(chatMessages(requests[1]));
    expect(loop.map((m) => m.tool_call_id ?? m.tool_calls?.[0]?.id)).toEqual([CALL_A, CALL_A, CALL_B, CALL_B]);

    // Two owners, one run.
    const record = await gw.endedRun(run.requestId);
    expect(record.status).toBe(RunStatus.COMPLETED);
    expect(record.beginCount).toBe(2);
  });

  it("mid model stream: the next worker makes the model call again and exactly one assistant message is stored", async () => {
    const firstText = "The first attempt streams this answer slowly.";
    const finalText = "The answer, streamed by the second worker.";
    const first = gw.llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: chatStream({ id: "chatcmpl-kill-stream-1", text: firstText }), holdAfterEvents: 3 });
    enqueueChat(gw, { id: "chatcmpl-kill-stream-2", text: finalText, usage: { prompt: 321, completion: 17 } });
    const doomed = await processes.startRunWorker(gw, "doomed-stream-worker");

    const chat = gw.client().conversation();
    const run = chat.send("Answer slowly.", { modelId: gw.modelId });
    // The stream is held mid-answer and its first text reached the IDE.
    await first.held;
    await run.waitForFrame(isTextDelta, "text of the first attempt");
    const exit = await doomed.kill("SIGKILL");
    expect(exit.signal).toBe("SIGKILL");
    // Nobody answers the gateway's caller probes any more: it aborts the dead worker's upstream request
    // instead of keeping it open (and spending tokens) until the endpoint is done.
    const orphaned = await first.request;
    await waitFor(() => orphaned.aborted, "the gateway to abort the dead worker's model call", 10_000);

    await gw.startWorker();
    const result = await finishedOk(run);
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    // The IDE shows the partial text of the first attempt, then the whole answer.
    expect(result.text.endsWith(finalText), frames).toBe(true);
    const partial = result.text.slice(0, -finalText.length);
    expect(partial.length).toBeGreaterThan(0);
    expect(firstText.startsWith(partial)).toBe(true);
    // Usage comes from the call that completed.
    expect(result.turnEnded?.outputTokens).toBe(17n);

    // The mock saw the same request twice: the call was re-issued, not continued.
    const requests = gw.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(2);
    expect(requests[1]!.rawBody).toBe(requests[0]!.rawBody);

    // Exactly one assistant message, the completed one.
    const stored = afterUser(await storedHistory(gw, chat.id));
    expect(stored.map((m) => m.body.case)).toEqual(["assistant"]);
    expect(assistantText(stored[0])).toBe(finalText);
    const record = await gw.endedRun(run.requestId);
    expect(record.status).toBe(RunStatus.COMPLETED);
    expect(record.beginCount).toBe(2);
    expect(record.providerCallIndex).toBe(1);
  });
});
