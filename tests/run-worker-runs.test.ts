/**
 * Run workers end to end on the bus, the plain runs: a text run completes and
 * is committed, concurrent runs spread over workers, a provider failure or a
 * client that cannot project the final state fails the run, a cancel aborts the
 * model call, a new run of a conversation supersedes the running one, and a
 * run naming a tool set nobody stored fails before any model call.
 * The stack (real store, provider gateway, workers, client double) is in
 * tests/run-worker-support.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { CommitCause, FailureKind, ModelFailureKind, PromptSpecSchema, RunStatus } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import { startStack, stopStacks, textAnswer, toolCalls, prepared, committed, textOf, runRecord, endedRecord } from "./run-worker-support.ts";

afterEach(stopStacks);

describe("run worker: runs", () => {
  it("completes a text run: streams the answer, commits it, waits for the client, then reports completed", async () => {
    const stack = await startStack();
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Hello there, friend.", [21, 4]) });
    let completedAfterCommit = false;
    const run = await stack.client.start(prepared("run-text", "conv-text", "hi"), {
      answer: (event) => {
        if (event.event.case === "terminal") completedAfterCommit = committed(run.states).some((c) => c.cause === CommitCause.FINAL_ANSWER);
        return { ok: true };
      },
    });
    const terminal = await run.terminal;
    expect(terminal.outcome.case).toBe("completed");
    expect(completedAfterCommit).toBe(true);

    // UI events: one per-run sequence from 1, all from model call 0.
    expect(run.events.map((e) => Number(e.seq))).toEqual(run.events.map((_, i) => i + 1));
    expect(run.events.every((e) => e.modelCallIndex === 0)).toBe(true);
    const streamed = run.events.flatMap((e) => (e.event.case === "textDelta" ? [e.event.value.text] : [])).join("");
    expect(streamed).toBe("Hello there, friend.");
    expect(run.events.some((e) => e.event.case === "usage")).toBe(true);

    const [final] = committed(run.states);
    expect(final?.cause).toBe(CommitCause.FINAL_ANSWER);
    expect(textOf(final?.appended[0])).toBe("Hello there, friend.");
    expect(final?.turnUsage?.inputTokens).toBe(21n);
    expect(final?.turnUsage?.outputTokens).toBe(4n);
    expect(final?.contextTokens).toBe(25n);
    // The response went to the client before its commit (the adapter prepares the commit's blobs with it): the same message.
    const response = run.events.at(-1)?.event;
    expect(response?.case).toBe("responseComplete");
    expect(final?.appended[0]?.body.value).toEqual(response?.value);

    // The completed terminal goes out with run.finish; the record follows.
    const record = await endedRecord(stack, "run-text");
    expect(record.status).toBe(RunStatus.COMPLETED);
    expect(record.headRevisionId).toBe(final?.revisionId);
    expect(record.usage?.inputTokens).toBe(21n);
    const history = await stack.history(record.headRevisionId);
    expect(history.map((m) => m.body.case)).toEqual(["user", "assistant"]);
    expect(textOf(history[1])).toBe("Hello there, friend.");
    const conversation = await stack.store("getConversation", { conversationId: "conv-text" });
    expect(conversation.headRevisionId).toBe(record.headRevisionId);
    expect(conversation.activeRunId).toBe("");
  });

  it("spreads ten concurrent runs over two workers, each run executed by exactly one worker", async () => {
    const stack = await startStack({ workers: 2 });
    for (let i = 0; i < 10; i++) stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer(`answer ${i}`) });
    const runs = await Promise.all(Array.from({ length: 10 }, (_, i) => stack.client.start(prepared(`run-many-${i}`, `conv-many-${i}`, `question ${i}`))));
    const terminals = await Promise.all(runs.map((r) => r.terminal));
    expect(terminals.map((t) => t.outcome.case)).toEqual(Array(10).fill("completed"));
    for (const run of runs) {
      const record = await endedRecord(stack, run.runId);
      expect(record.status).toBe(RunStatus.COMPLETED);
      expect(record.beginCount).toBe(1);
      expect(run.states.filter((s) => s.event.case === "terminal")).toHaveLength(1);
    }
    expect(stack.llm.requestsTo("openai-chat")).toHaveLength(10);
    const taken = stack.workers.map((w) => w.runsTaken());
    expect(taken.reduce((a, b) => a + b, 0)).toBe(10);
    expect(taken.every((n) => n > 0)).toBe(true);
  });

  it("fails the run on a provider failure and appends nothing", async () => {
    const stack = await startStack();
    stack.llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 401, body: { error: { message: "bad key", type: "invalid_request_error", code: "invalid_api_key" } } });
    const run = await stack.client.start(prepared("run-fail", "conv-fail", "hi"));
    const terminal = await run.terminal;
    expect(terminal.outcome.case).toBe("failed");
    if (terminal.outcome.case !== "failed") return;
    expect(terminal.outcome.value.kind).toBe(FailureKind.PROVIDER);
    expect(terminal.outcome.value.modelFailureKind).toBe(ModelFailureKind.AUTH);
    expect(committed(run.states)).toEqual([]);
    const record = await runRecord(stack, "run-fail");
    expect(record.status).toBe(RunStatus.FAILED);
    expect(record.failureKind).toBe(FailureKind.PROVIDER);
    expect(record.headRevisionId).toBe(record.startRevisionId);
    expect((await stack.history(record.headRevisionId)).map((m) => m.body.case)).toEqual(["user"]);
  });

  it("cancels a run mid model call and aborts the upstream request", async () => {
    const stack = await startStack();
    const response = stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("never finished here"), holdAfterEvents: 2 });
    const run = await stack.client.start(prepared("run-abort", "conv-abort", "hi"));
    await response.held;
    await run.cancel();
    expect((await run.terminal).outcome.case).toBe("cancelled");
    const request = await response.request;
    await waitFor(() => request.aborted, "the upstream request to be aborted");
    const record = await runRecord(stack, "run-abort");
    expect(record.status).toBe(RunStatus.CANCELLED);
    expect(record.headRevisionId).toBe(record.startRevisionId);
  });

  it("cancels a run whose cancel was sent before any worker took it (before its command consumer existed)", async () => {
    const stack = await startStack({ workers: 0 });
    // Should a model call start before the cancel is read, it never finishes on its own.
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("never finished here"), holdAfterEvents: 2 });
    const run = await stack.client.start(prepared("run-early-cancel", "conv-early-cancel", "hi"));
    await run.cancel();
    await stack.startWorker();
    expect((await run.terminal).outcome.case).toBe("cancelled");
    const record = await runRecord(stack, "run-early-cancel");
    expect(record.status).toBe(RunStatus.CANCELLED);
    expect(record.headRevisionId).toBe(record.startRevisionId);
    expect(committed(run.states)).toEqual([]);
    for (const request of stack.llm.requestsTo("openai-chat")) await waitFor(() => request.aborted, "a started upstream request to be aborted");
  });

  it("lets a new run of the conversation supersede the running one", async () => {
    const stack = await startStack({ workers: 2 });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: toolCalls("", [{ id: "call_old", name: "Read", args: "{}" }]) });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Fresh answer.") });
    const old = await stack.client.start(prepared("run-old", "conv-shared", "first"));
    await waitFor(() => old.states.some((s) => s.event.case === "executeToolRound"), "the first run's tool round");
    const oldRecord = await runRecord(stack, "run-old");
    const fresh = await stack.client.start(prepared("run-new", "conv-shared", "second", { baseRevisionId: oldRecord.startRevisionId }));
    expect((await fresh.terminal).outcome.case).toBe("completed");
    expect((await old.terminal).outcome.case).toBe("cancelled");
    // A late result of the old run can no longer move the conversation.
    await old.sendToolResult("call_old", "late");
    const conversation = await stack.store("getConversation", { conversationId: "conv-shared" });
    const freshRecord = await endedRecord(stack, "run-new");
    expect(conversation.headRevisionId).toBe(freshRecord.headRevisionId);
    expect((await stack.history(freshRecord.headRevisionId)).map(textOf)).toEqual(["first", "second", "Fresh answer."]);
    expect((await runRecord(stack, "run-old")).status).toBe(RunStatus.CANCELLED);
  });

  it("fails as a client failure when the client cannot project the final state, and never reports completed", async () => {
    const stack = await startStack();
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Answer.") });
    const run = await stack.client.start(prepared("run-reject", "conv-reject", "hi"), {
      answer: (event) => (event.event.case === "stateCommitted" ? { ok: false, error: "blob ack timeout" } : { ok: true }),
    });
    const terminal = await run.terminal;
    expect(terminal.outcome.case === "failed" && terminal.outcome.value.kind).toBe(FailureKind.CLIENT);
    expect((await runRecord(stack, "run-reject")).status).toBe(RunStatus.FAILED);
  });

  it("fails a run whose tool set digest names no stored set as a protocol failure, without a model call", async () => {
    const stack = await startStack();
    const init = prepared("run-unknown-tools", "conv-unknown-tools", "hi");
    const run = await stack.client.start({ ...init, prompt: create(PromptSpecSchema, { mode: "agent", systemText: "You are a test assistant.", toolsDigest: new Uint8Array(32).fill(3) }) });
    const terminal = await run.terminal;
    expect(terminal.outcome.case).toBe("failed");
    expect(terminal.outcome.case === "failed" && terminal.outcome.value.kind).toBe(FailureKind.PROTOCOL);
    expect(terminal.outcome.case === "failed" && terminal.outcome.value.message).toMatch(/^no tool set 0303[0-9a-f]+ is stored$/);
    expect(stack.llm.requestsTo("openai-chat")).toHaveLength(0);
    expect((await endedRecord(stack, "run-unknown-tools")).status).toBe(RunStatus.FAILED);
  });
});
