/**
 * Run workers end to end on the bus, the client's liveness: a client that is
 * gone or silent at a barrier, an unanswered terminal sent again, and liveness
 * probes while a run waits for tool results. The stack is in
 * tests/run-worker-support.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RunStatus } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import { startStack, stopStacks, textAnswer, toolCalls, prepared, runRecord, endedRecord } from "./run-worker-support.ts";

afterEach(stopStacks);

describe("run worker: client liveness", () => {
  it("cancels the run when the client is gone (no one answers the barrier) or silent (no ack in time)", async () => {
    const stack = await startStack({ workerEnv: { STATE_ACK_TIMEOUT_MS: "300" } });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Nobody reads this.") });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Nobody acks this.") });
    const gone = await stack.client.start(prepared("run-gone", "conv-gone", "hi"));
    gone.disconnect();
    const silent = await stack.client.start(prepared("run-silent", "conv-silent", "hi"), { answer: () => "no-answer" });
    for (const runId of ["run-gone", "run-silent"]) {
      const record = await waitFor(async () => {
        const { run: r } = await stack.store("getRun", { runId });
        return r !== undefined && r.status !== RunStatus.RUNNING && r;
      }, `${runId} to end`);
      expect(record.status).toBe(RunStatus.CANCELLED);
      expect(record.failureMessage).toMatch(/client gone/);
    }
    // An unanswered terminal is sent again, a bounded number of times.
    await waitFor(() => silent.states.filter((s) => s.event.case === "terminal").length === 3, "the terminal sent three times");
    expect((await silent.terminal).outcome.case).toBe("cancelled");
  });

  it("sends the terminal again when the first one gets no answer", async () => {
    const stack = await startStack({ workerEnv: { STATE_ACK_TIMEOUT_MS: "300" } });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("The end gets lost once.") });
    let terminals = 0;
    const run = await stack.client.start(prepared("run-lost-terminal", "conv-lost-terminal", "hi"), {
      answer: (event) => (event.event.case === "terminal" && ++terminals === 1 ? "no-answer" : { ok: true }),
    });
    expect((await run.terminal).outcome.case).toBe("completed");
    await waitFor(() => terminals === 2, "the terminal sent a second time");
    expect((await endedRecord(stack, "run-lost-terminal")).status).toBe(RunStatus.COMPLETED);
    // Acknowledged the second time: not sent a third time.
    await waitFor(() => stack.workers[0]?.activeRuns() === 0, "the run to leave the worker");
    expect(terminals).toBe(2);
  });

  it("cancels a run waiting for tool results once its client is gone (liveness probes find nobody)", async () => {
    const stack = await startStack({ workerEnv: { PROBE_INTERVAL_MS: "150" } });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: toolCalls("", [{ id: "call_wait", name: "Read", args: "{}" }]) });
    const run = await stack.client.start(prepared("run-probed", "conv-probed", "read it"));
    await waitFor(() => run.states.some((s) => s.event.case === "executeToolRound"), "the tool round to execute");
    // While the client answers its probes, the run keeps waiting for the result.
    await waitFor(() => run.probes() >= 3, "three liveness probes answered");
    expect((await runRecord(stack, "run-probed")).status).toBe(RunStatus.RUNNING);
    run.disconnect();
    const record = await waitFor(async () => {
      const r = await runRecord(stack, "run-probed");
      return r.status !== RunStatus.RUNNING && r;
    }, "the run to end after its client left", 10_000);
    expect(record.status).toBe(RunStatus.CANCELLED);
    expect(record.failureMessage).toMatch(/client gone: no client is listening/);
    expect(record.headRevisionId).toBe(record.startRevisionId);
    expect(stack.llm.requestsTo("openai-chat")).toHaveLength(1);
  });

  it("cancels a run waiting for tool results when its client answers a probe that the run's stream has ended", async () => {
    const stack = await startStack({ workerEnv: { PROBE_INTERVAL_MS: "150" } });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: toolCalls("", [{ id: "call_ended", name: "Read", args: "{}" }]) });
    let streamEnded = false;
    const run = await stack.client.start(prepared("run-stream-ended", "conv-stream-ended", "read it"), {
      probe: () => (streamEnded ? { ok: false, error: "the client stream is closed" } : { ok: true }),
    });
    await waitFor(() => run.states.some((s) => s.event.case === "executeToolRound"), "the tool round to execute");
    await waitFor(() => run.probes() >= 1, "a liveness probe answered");
    streamEnded = true;
    const terminal = await run.terminal;
    expect(terminal.outcome.case === "cancelled" && terminal.outcome.value.reason).toMatch(/client gone: the client's stream has ended/);
    expect((await runRecord(stack, "run-stream-ended")).status).toBe(RunStatus.CANCELLED);
  });
});
