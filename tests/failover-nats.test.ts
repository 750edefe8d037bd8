/**
 * Failure tests with a NATS restart: the whole gateway runs on a private
 * nats-server (JetStream, its own port and store directory), which is stopped
 * (SIGTERM, waited for) and started again on the same port and store while a
 * run is in flight. Every service reconnects on its own.
 *
 * What the code guarantees (and these tests hold it to): JetStream state (the
 * run queue, the run's commands) survives the restart; anything published
 * while a connection is down is lost (the nats.js client empties its outbound
 * buffer each time it dials). The adapter publishes its commands (tool
 * results, cancel, client closed) again until their deadline, so a short blip
 * loses none; the worker notices lost model frames as provider silence. So
 * the Cursor stream of a run caught by the restart either completes or ends
 * with a clean error EndStream within those timeouts, nothing half-stored; a
 * run owner whose client has gone meanwhile finds out by its liveness probes;
 * and the next turn works.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FailureKind, RunStatus, type Message } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import { afterUser, storedHistory } from "@byok/test-support/stored-messages";
import { isTextDelta, type CursorRun, type RunResult } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { PrivateNatsServer, TestProcesses } from "./failover-support.ts";
import { afterLastUser, chatMessages } from "@byok/test-support/chat-requests";
import { chatStream, enqueueChat, finishedOk, holdReads } from "./tools-support.ts";

/** Short timeouts so that a lost message shows within seconds (defaults are 10-30 s). */
const SHORT_TIMEOUTS = {
  runWorker: {
    RUN_ACK_WAIT_MS: "2000",
    RUN_WORKING_INTERVAL_MS: "500",
    MODEL_IDLE_TIMEOUT_MS: "3000",
    STATE_ACK_TIMEOUT_MS: "5000",
    STORE_TIMEOUT_MS: "3000",
    PROBE_INTERVAL_MS: "1000",
  },
  providerGateway: { PROVIDER_KEEPALIVE_MS: "1000" },
  cursorAdapter: { STORE_TIMEOUT_MS: "3000" },
};
/** A run caught by the restart has ended on the client by then (the timeouts above are 3-5 s). */
const RUN_END_BOUND_MS = 15_000;

async function endsWithin(run: CursorRun, ms: number): Promise<RunResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run did not end within ${ms} ms of the NATS restart; frames so far: ${run.timeline.map((e) => e.label).join(" ")}`)), ms);
  });
  try {
    return await Promise.race([run.finished, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("nats-server restarted mid-run", () => {
  const processes = new TestProcesses();
  let nats: PrivateNatsServer;
  let gw: GatewayHarness;
  beforeEach(async () => {
    nats = await PrivateNatsServer.start(processes);
    gw = await startGateway({ natsUrl: nats.url, env: SHORT_TIMEOUTS });
  });
  afterEach(async () => {
    try {
      // The harness tears down through NATS (drain, stream cleanup): give it a server.
      if (!nats.running) await nats.start();
      await gw.stop();
    } finally {
      await processes.stopAll();
    }
  });

  /**
   * The test's own connection is back too: clientsBack() counts the clients that had subscriptions
   * when the server stopped, and a request sent in the moment this one reconnects is lost.
   */
  async function harnessBack(): Promise<void> {
    await waitFor(() => gw.nc.flush().then(() => true, () => false), "the test's NATS connection to be back");
  }

  async function storedAfterUser(conversationId: string): Promise<Message[]> {
    await harnessBack();
    return afterUser(await storedHistory(gw, conversationId));
  }

  /** Every run read here has ended for its client (a completed one may be recorded a moment later). */
  async function runRecord(runId: string) {
    await harnessBack();
    return gw.endedRun(runId);
  }

  it("cuts a model stream: the run ends within the bound (answer stored once, or a clean unavailable error with nothing stored), and the next turn completes", async () => {
    const firstText = "Streaming across a NATS restart.";
    const first = gw.llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: chatStream({ id: "chatcmpl-nats-1", text: firstText }), holdAfterEvents: 3 });
    const chat = gw.client().conversation();
    const run = chat.send("Tell me something.", { modelId: gw.modelId });
    await first.held;
    await run.waitForFrame(isTextDelta, "the first text");

    await nats.restart();
    // The rest of the stream leaves the gateway while the services are still reconnecting.
    first.release();
    const result = await endsWithin(run, RUN_END_BOUND_MS);
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    await nats.clientsBack();
    const record = await runRecord(run.requestId);
    const stored = await storedAfterUser(chat.id);
    if (result.end.kind === "ok") {
      expect(result.text).toBe(firstText);
      expect(record.status).toBe(RunStatus.COMPLETED);
      expect(stored.map((m) => m.body.case)).toEqual(["assistant"]);
    } else {
      expect(result.end, frames).toMatchObject({ kind: "error", code: "unavailable" });
      expect(result.turnEnded).toBeUndefined();
      expect(record.status).toBe(RunStatus.FAILED);
      expect(record.failureKind).toBe(FailureKind.PROVIDER);
      // A failed cycle appends nothing.
      expect(stored.filter((m) => m.body.case === "assistant")).toEqual([]);
    }

    enqueueChat(gw, { id: "chatcmpl-nats-2", text: "Back after the restart." });
    const next = await finishedOk(chat.send("Still there?", { modelId: gw.modelId }));
    expect(next.violations, next.describe()).toEqual([]);
    expect(next.text).toBe("Back after the restart.");
  });

  it("while a tool runs in the IDE: a result sent after the reconnect reaches the run owner over the restarted JetStream, and the run completes", async () => {
    enqueueChat(gw, { id: "chatcmpl-nats-tool-1", text: "Reading n.ts.", calls: [{ id: "call_nats_read", name: "Read", args: { path: "/home/dev/project/n.ts" } }] });
    enqueueChat(gw, { id: "chatcmpl-nats-tool-2", text: "Read it after the restart." });
    const reads = holdReads(() => "export const n = 1;\n");
    const chat = gw.client().conversation();
    const run = chat.send("Read n.ts.", { modelId: gw.modelId, onExec: reads.onExec });
    await reads.started;
    await nats.restart();
    await nats.clientsBack();
    reads.release();

    const result = await endsWithin(run, RUN_END_BOUND_MS);
    const frames = result.describe();
    expect(result.end, frames).toEqual({ kind: "ok", metadata: {} });
    expect(result.violations, frames).toEqual([]);
    expect(result.text).toBe("Reading n.ts.Read it after the restart.");
    expect(reads.executed.length).toBe(1);
    expect(result.checkpoints.filter((c) => c.beforeTurnEnded).map((c) => c.kind), frames).toEqual(["staged", "settled"]);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(loop.map((m) => m.role)).toEqual(["assistant", "tool"]);
    expect((await storedAfterUser(chat.id)).map((m) => m.body.case)).toEqual(["assistant", "toolResult", "assistant"]);
    expect((await runRecord(run.requestId)).status).toBe(RunStatus.COMPLETED);
  });

  it("while a tool runs in the IDE: a result sent during a short NATS outage is published again after the reconnect, and the run completes", async () => {
    enqueueChat(gw, { id: "chatcmpl-nats-blip-1", text: "Reading b.ts.", calls: [{ id: "call_nats_blip", name: "Read", args: { path: "/home/dev/project/b.ts" } }] });
    enqueueChat(gw, { id: "chatcmpl-nats-blip-2", text: "Read it across the outage." });
    const reads = holdReads(() => "export const b = 2;\n");
    const chat = gw.client().conversation();
    const run = chat.send("Read b.ts.", { modelId: gw.modelId, onExec: reads.onExec });
    await reads.started;
    await nats.stop();
    reads.release();
    // The adapter has the result (the IDE sees the call completed) and publishes it while NATS is down.
    await run.waitForFrame((m) => m.message.case === "interactionUpdate" && m.message.value.message.case === "toolCallCompleted", "the tool call completed");
    await nats.start();

    const result = await endsWithin(run, RUN_END_BOUND_MS);
    const frames = result.describe();
    expect(result.end, frames).toEqual({ kind: "ok", metadata: {} });
    expect(result.violations, frames).toEqual([]);
    expect(result.text).toBe("Reading b.ts.Read it across the outage.");
    expect(result.checkpoints.filter((c) => c.beforeTurnEnded).map((c) => c.kind), frames).toEqual(["staged", "settled"]);
    expect((await storedAfterUser(chat.id)).map((m) => m.body.case)).toEqual(["assistant", "toolResult", "assistant"]);
    expect((await runRecord(run.requestId)).status).toBe(RunStatus.COMPLETED);
  });

  it("while a tool runs in the IDE: a result sent while NATS stays down ends the Cursor stream with a clean error; the run owner learns that its client is gone, and the next turn completes", async () => {
    enqueueChat(gw, { id: "chatcmpl-nats-down-1", calls: [{ id: "call_nats_down", name: "Read", args: { path: "/home/dev/project/d.ts" } }] });
    const reads = holdReads(() => "export const d = 4;\n");
    const chat = gw.client().conversation();
    const run = chat.send("Read d.ts.", { modelId: gw.modelId, onExec: reads.onExec });
    await reads.started;
    await nats.stop();
    reads.release();
    // NATS stays down until the Cursor side has its answer.
    const result = await endsWithin(run, RUN_END_BOUND_MS);
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    expect(result.end, frames).toMatchObject({ kind: "error", code: "unavailable" });
    expect(result.turnEnded).toBeUndefined();
    expect(result.checkpoints.map((c) => c.kind)).toEqual(["staged"]);

    await nats.start();
    await nats.clientsBack();
    // The run owner, waiting for the result, learns that the client is gone: from the client-closed
    // command (when its publish outlived the outage) or else from its liveness probes. No next turn needed.
    const first = await waitFor(async () => {
      const record = await runRecord(run.requestId);
      return record.status !== RunStatus.RUNNING && record;
    }, "the first run to end without a next turn", 10_000);
    if (first.status === RunStatus.FAILED) expect(first.failureKind).toBe(FailureKind.CLIENT);
    else expect(first, "cancelled as client gone").toMatchObject({ status: RunStatus.CANCELLED, failureMessage: expect.stringMatching(/client gone/) });
    // Nothing of the round was stored.
    expect(await storedAfterUser(chat.id)).toEqual([]);
    enqueueChat(gw, { id: "chatcmpl-nats-down-2", text: "Working again." });
    const next = await finishedOk(chat.send("Try again?", { modelId: gw.modelId }));
    expect(next.violations, next.describe()).toEqual([]);
    expect(next.text).toBe("Working again.");
  });
});
