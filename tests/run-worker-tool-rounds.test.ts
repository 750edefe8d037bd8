/**
 * Run workers end to end on the bus, the tool rounds: results committed as
 * pairs behind the settled barrier, a cancel while waiting for results, a run
 * handed over to the next worker mid-round, the last delivery failing the run,
 * and a client's pending tool round resumed. The stack is in
 * tests/run-worker-support.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { jetstream } from "@nats-io/jetstream";
import { CommitCause, PreparedRunSchema, RunStatus, type Message } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import type { RunHooks } from "./run-client-double.ts";
import { startStack, stopStacks, textAnswer, toolCalls, userText, prepared, committed, textOf, runRecord, endedRecord, llmMessages } from "./run-worker-support.ts";

afterEach(stopStacks);

describe("run worker: tool rounds", () => {
  it("runs a tool round: pairs in arrival order, next model call only after the settled barrier, prefix-stable requests", async () => {
    const stack = await startStack();
    stack.llm.enqueue({
      kind: "chunks",
      endpoint: "openai-chat",
      chunks: toolCalls("Reading both.", [
        { id: "call_A", name: "Read", args: '{"path":"a.txt"}' },
        { id: "call_B", name: "Read", args: '{"path":"b.txt"}' },
      ]),
    });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Both files say hello.", [60, 6]) });
    let settledAckAt = 0;
    let requestsAtSettled = -1;
    const hooks: RunHooks = {
      // B finishes first, then A.
      execute: (round) => [...round.calls].reverse().map((call) => ({ call, content: `contents of ${call.callId}` })),
      answer: async (event) => {
        if (event.event.case === "stateCommitted" && event.event.value.cause === CommitCause.TOOL_ROUND_SETTLED) {
          requestsAtSettled = stack.llm.requestsTo("openai-chat").length;
          await new Promise((resolve) => setImmediate(resolve));
          settledAckAt = Date.now();
        }
        return { ok: true };
      },
    };
    const run = await stack.client.start(prepared("run-tools", "conv-tools", "read a and b"), hooks);
    expect((await run.terminal).outcome.case).toBe("completed");

    const causes = committed(run.states).map((c) => c.cause);
    expect(causes).toEqual([
      CommitCause.TOOL_ROUND_STAGED,
      CommitCause.TOOL_RESULT,
      CommitCause.TOOL_RESULT,
      CommitCause.TOOL_ROUND_SETTLED,
      CommitCause.FINAL_ANSWER,
    ]);
    const execute = run.states.find((s) => s.event.case === "executeToolRound");
    expect(execute?.event.case === "executeToolRound" && execute.event.value.calls.map((c) => c.callId)).toEqual(["call_A", "call_B"]);
    const staged = committed(run.states)[0];
    expect(staged?.pending?.content.map((p) => p.part.case)).toEqual(["text", "toolCall", "toolCall"]);
    expect(staged?.appended).toEqual([]);

    // Results became adjacent pairs in arrival order; text rides on the first pair only.
    const record = await endedRecord(stack, "run-tools");
    const history = await stack.history(record.headRevisionId);
    expect(history.map((m) => m.body.case)).toEqual(["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    const pairCall = (m: Message | undefined) =>
      m?.body.case === "assistant" ? m.body.value.content.flatMap((p) => (p.part.case === "toolCall" ? [p.part.value.callId] : [])) : [];
    expect(pairCall(history[1])).toEqual(["call_B"]);
    expect(history[2]?.body.case === "toolResult" && history[2].body.value.content).toBe("contents of call_B");
    expect(pairCall(history[3])).toEqual(["call_A"]);
    expect(textOf(history[1])).toBe("Reading both.");
    expect(textOf(history[3])).toBe("");

    // The second model call waited for the settled barrier and extends the first request.
    const requests = stack.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(2);
    expect(requestsAtSettled).toBe(1);
    expect(requests[1]?.receivedAt).toBeGreaterThanOrEqual(settledAckAt);
    const first = llmMessages(stack.llm, 0);
    const second = llmMessages(stack.llm, 1);
    expect(second.slice(0, first.length)).toEqual(first);
    expect(second.length).toBeGreaterThan(first.length);
    expect(run.events.filter((e) => e.event.case === "textStart").map((e) => e.modelCallIndex)).toEqual([0, 1]);

    // Turn usage sums both calls.
    const final = committed(run.states).at(-1);
    expect(final?.turnUsage?.inputTokens).toBe(90n);
    expect(record.usage?.outputTokens).toBe(15n);
  });

  it("cancels a run waiting for tool results: cancelled, nothing more appended", async () => {
    const stack = await startStack();
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: toolCalls("", [{ id: "call_X", name: "Read", args: "{}" }]) });
    const run = await stack.client.start(prepared("run-cancel", "conv-cancel", "read x"));
    await waitFor(() => run.states.some((s) => s.event.case === "executeToolRound"), "the tool round to execute");
    await run.cancel("user pressed stop");
    const terminal = await run.terminal;
    expect(terminal.outcome.case).toBe("cancelled");
    const record = await runRecord(stack, "run-cancel");
    expect(record.status).toBe(RunStatus.CANCELLED);
    expect(record.headRevisionId).toBe(record.startRevisionId);
    expect(stack.llm.requestsTo("openai-chat")).toHaveLength(1);
  });

  it("hands a run over when its worker stops mid-round; the next worker finishes it from the store", async () => {
    const stack = await startStack();
    stack.llm.enqueue({
      kind: "chunks",
      endpoint: "openai-chat",
      chunks: toolCalls("", [
        { id: "call_1", name: "Read", args: "{}" },
        { id: "call_2", name: "Read", args: "{}" },
      ]),
    });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Done after failover.") });
    const run = await stack.client.start(prepared("run-failover", "conv-failover", "go"));
    await waitFor(() => run.states.some((s) => s.event.case === "executeToolRound"), "the tool round");
    await run.sendToolResult("call_1", "one");
    await waitFor(() => committed(run.states).some((c) => c.cause === CommitCause.TOOL_RESULT), "the first result to commit");
    const [first] = stack.workers;
    await first?.stop();
    await stack.startWorker();
    // The new owner asks again for the call still missing, and only that one.
    await waitFor(() => run.states.filter((s) => s.event.case === "executeToolRound").length === 2, "execute_tool_round again");
    const again = run.states.filter((s) => s.event.case === "executeToolRound")[1];
    expect(again?.event.case === "executeToolRound" && again.event.value.calls.map((c) => c.callId)).toEqual(["call_2"]);
    await run.sendToolResult("call_2", "two");
    expect((await run.terminal).outcome.case).toBe("completed");
    const record = await runRecord(stack, "run-failover");
    expect(record.beginCount).toBe(2);
    const history = await stack.history(record.headRevisionId);
    expect(history.map((m) => m.body.case)).toEqual(["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    expect(history.filter((m) => m.body.case === "toolResult").map((m) => (m.body.case === "toolResult" ? m.body.value.content : ""))).toEqual(["one", "two"]);
  });

  it("makes the next model call once when the run is delivered again while its first owner still waits for results", async () => {
    const stack = await startStack({ workers: 2 });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: toolCalls("", [{ id: "call_1", name: "Read", args: "{}" }]) });
    // One answer for the call after the round: a second one would get the mock's 500.
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Read it once.") });
    const init = prepared("run-twice", "conv-twice", "go");
    const run = await stack.client.start(init);
    await waitFor(() => run.states.some((s) => s.event.case === "executeToolRound"), "the tool round");
    // A second delivery of the same run while the first owner is alive: what JetStream does when a
    // consumer leader change loses the owner's in-progress acks (seen on a NATS cluster failover).
    const js = jetstream(stack.client.nc);
    await js.publish(stack.names.runStart, toBinary(PreparedRunSchema, create(PreparedRunSchema, init)), { msgID: "run-twice:delivered-again" });
    await waitFor(async () => (await runRecord(stack, "run-twice")).beginCount === 2, "the second delivery to begin the run");
    await run.sendToolResult("call_1", "one");
    // The whole outcome on a mismatch: a failed run's message says which owner went wrong.
    expect((await run.terminal).outcome).toMatchObject({ case: "completed" });
    // Both owners read the result; the first one learns from the store that the run was begun again and stops.
    expect(stack.llm.requestsTo("openai-chat").map((r) => (r.body as { messages?: unknown[] }).messages?.length)).toEqual([2, 4]);
    const record = await endedRecord(stack, "run-twice");
    expect(record.status).toBe(RunStatus.COMPLETED);
    const history = await stack.history(record.headRevisionId);
    expect(history.map((m) => m.body.case)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(run.states.filter((s) => s.event.case === "terminal")).toHaveLength(1);
  });

  it("fails a run on its last delivery instead of dropping it", async () => {
    const stack = await startStack({ workerEnv: { RUN_MAX_DELIVER: "2" } });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: toolCalls("", [{ id: "call_1", name: "Read", args: "{}" }]) });
    const run = await stack.client.start(prepared("run-exhausted", "conv-exhausted", "go"));
    await waitFor(() => run.states.some((s) => s.event.case === "executeToolRound"), "the tool round");
    await stack.workers[0]?.stop();
    await stack.startWorker();
    const terminal = await run.terminal;
    expect(terminal.outcome.case === "failed" && terminal.outcome.value.message).toMatch(/2 deliveries/);
    expect((await runRecord(stack, "run-exhausted")).status).toBe(RunStatus.FAILED);
  });

  it("resumes a client's pending tool round before any model call", async () => {
    const stack = await startStack();
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Resumed fine.") });
    // The client's history so far: the user's request (imported as the base revision).
    const imported = await stack.store("importHistory", { conversationId: "conv-resume", memberId: "member-1", messages: [userText("list files")] });
    const pending = { content: [{ part: { case: "toolCall" as const, value: { callId: "call_ls", name: "Read", argumentsJson: '{"command":"ls"}' } } }] };
    const run = await stack.client.start(
      prepared("run-resume", "conv-resume", "", { action: { case: "resume", value: { pendingAssistant: pending } }, baseRevisionId: imported.revisionId }),
      { execute: (round) => round.calls.map((call) => ({ call, content: "a.txt\nb.txt" })) },
    );
    expect((await run.terminal).outcome.case).toBe("completed");
    const execute = run.states.find((s) => s.event.case === "executeToolRound");
    expect(execute?.event.case === "executeToolRound" && execute.event.value.calls.map((c) => c.callId)).toEqual(["call_ls"]);
    const first = llmMessages(stack.llm, 0) as Array<{ role: string }>;
    expect(first.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    const record = await runRecord(stack, "run-resume");
    expect((await stack.history(record.headRevisionId)).map((m) => m.body.case)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  });
});
