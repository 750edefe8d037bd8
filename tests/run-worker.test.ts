/**
 * Run workers end to end on the bus: the real store (fresh Postgres database),
 * the real provider gateway (answering from the mock LLM over HTTP), one or two
 * real run workers, and a small client-side double of the adapter
 * (tests/support/run-client-double.ts) that publishes PreparedRuns, answers
 * state events and sends tool results and cancels.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import {
  busNames,
  CommitCause,
  FailureKind,
  ModelFailureKind,
  RunStatus,
  STORE_OPERATIONS,
  UserOrigin,
  type BusNames,
  type Message,
  type MessageSchema,
  type PreparedRunSchema,
  type StateCommitted,
  type StateEvent,
  type StoreOperations,
} from "@byok/contracts";
import { busRequest, parseGatewayConfig, silentLogger, createLogger, type Logger } from "@byok/platform";
import { loadConfig as loadStoreConfig } from "../services/store/src/config.ts";
import { startStore } from "../services/store/src/service.ts";
import { loadConfig as loadGatewayConfig } from "../services/provider-gateway/src/config.ts";
import { startProviderGateway } from "../services/provider-gateway/src/service.ts";
import { loadConfig as loadWorkerConfig } from "../services/run-worker/src/config.ts";
import { startRunWorker, type RunWorker } from "../services/run-worker/src/service.ts";
import { createTestBus, createTestDatabase, waitFor } from "./support/infra.ts";
import { startMockLlm, type MockLlm } from "./support/mock-llm.ts";
import { startRunClientDouble, type RunClientDouble, type RunHooks } from "./support/run-client-double.ts";

const MODEL_ID = "byok-run-worker-test";
const KEY_ENV = "RUN_WORKER_TEST_LLM_KEY";

function logger(service: string): Logger {
  const level = process.env["HARNESS_LOG_LEVEL"];
  return level ? createLogger({ service, level }) : silentLogger();
}

// ---- synthetic OpenAI chat streams (what the mock LLM sends) ----

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

function usageChunk(prompt: number, completion: number): unknown {
  return { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
}

function textAnswer(text: string, usage: [number, number] = [20, 5]): unknown[] {
  return [chunk({ role: "assistant", content: "" }), ...text.split(/(?<= )/).map((t) => chunk({ content: t })), chunk({}, "stop"), usageChunk(...usage)];
}

function toolCalls(text: string, calls: Array<{ id: string; name: string; args: string }>, usage: [number, number] = [30, 9]): unknown[] {
  return [
    chunk({ role: "assistant", content: text }),
    ...calls.flatMap((c, index) => [
      chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }),
      chunk({ tool_calls: [{ index, function: { arguments: c.args } }] }),
    ]),
    chunk({}, "tool_calls"),
    usageChunk(...usage),
  ];
}

// ---- the stack ----

interface Stack {
  readonly names: BusNames;
  readonly llm: MockLlm;
  readonly client: RunClientDouble;
  readonly workers: RunWorker[];
  startWorker(env?: Record<string, string>): Promise<RunWorker>;
  store<K extends keyof StoreOperations>(op: K, request: MessageInitShape<StoreOperations[K]["request"]>): Promise<MessageShape<StoreOperations[K]["response"]>>;
  /** The messages of a revision, oldest first. */
  history(revisionId: string): Promise<Message[]>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startStack(options: { workers?: number; workerEnv?: Record<string, string> } = {}): Promise<Stack> {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const bus = createTestBus();
  cleanups.push(() => bus.cleanup());
  const llm = await startMockLlm();
  cleanups.push(() => llm.stop());
  const names = busNames(bus.prefix);
  const busEnv = { NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, LOG_LEVEL: process.env["HARNESS_LOG_LEVEL"] || "silent" };

  const store = await startStore(loadStoreConfig({ ...busEnv, DATABASE_URL: db.url }), { log: logger("store") });
  cleanups.push(() => store.stop());
  const gatewayConfig = parseGatewayConfig(
    {
      providers: { mock: { kind: "openai-chat", baseUrl: llm.baseUrl("openai-chat"), apiKeyEnv: KEY_ENV, maxAttempts: 1 } },
      models: [{ id: MODEL_ID, displayName: "Run worker test model", provider: "mock", upstreamModel: "gpt-4o" }],
    },
    "run-worker test",
  );
  const gateway = await startProviderGateway(loadGatewayConfig({ ...busEnv, [KEY_ENV]: "mock-key-not-a-secret" }, gatewayConfig), { log: logger("provider-gateway") });
  cleanups.push(() => gateway.stop());

  const workers: RunWorker[] = [];
  const startWorker = async (env: Record<string, string> = {}): Promise<RunWorker> => {
    const id = `test-worker-${workers.length + 1}`;
    const worker = await startRunWorker(loadWorkerConfig({ ...busEnv, WORKER_ID: id, ...options.workerEnv, ...env }), { log: logger(id) });
    workers.push(worker);
    cleanups.push(() => worker.stop());
    return worker;
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await startWorker();

  const client = await startRunClientDouble(bus.natsUrl, names);
  cleanups.push(() => client.close());

  const storeRequest: Stack["store"] = (op, request) => {
    const operation = STORE_OPERATIONS[op];
    return busRequest(client.nc, names.store(operation.name), operation.request, request as never, operation.response, { timeoutMs: 10_000 }) as never;
  };
  return {
    names,
    llm,
    client,
    workers,
    startWorker,
    store: storeRequest,
    async history(revisionId) {
      return (await storeRequest("getRevisionMessages", { revisionId })).messages;
    },
  };
}

function userText(text: string): MessageInitShape<typeof MessageSchema> {
  return { body: { case: "user", value: { clientId: `user:${text}`, origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } };
}

type PreparedInit = MessageInitShape<typeof PreparedRunSchema>;

function prepared(runId: string, conversationId: string, text: string, extra: { action?: NonNullable<Extract<PreparedInit, { runId?: string }>["action"]>; baseRevisionId?: string } = {}): PreparedInit {
  return {
    runId,
    conversationId,
    memberId: "member-1",
    model: { modelId: MODEL_ID },
    prompt: { mode: "agent", systemText: "You are a test assistant.", tools: [{ name: "Read", description: "Read a file", parametersJson: '{"type":"object"}' }] },
    action: extra.action ?? { case: "start", value: { initialMessages: [userText(text)] } },
    baseRevisionId: extra.baseRevisionId ?? "",
  };
}

function committed(states: StateEvent[]): StateCommitted[] {
  return states.flatMap((s) => (s.event.case === "stateCommitted" ? [s.event.value] : []));
}

function textOf(message: Message | undefined): string {
  if (message?.body.case !== "assistant" && message?.body.case !== "user") return "";
  return message.body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("");
}

async function runRecord(stack: Stack, runId: string) {
  const { run } = await stack.store("getRun", { runId });
  if (run === undefined) throw new Error(`run ${runId} not in the store`);
  return run;
}

/** Messages the LLM received in its n-th request (0-based). */
function llmMessages(llm: MockLlm, n: number): unknown[] {
  const body = llm.requestsTo("openai-chat")[n]?.body as { messages?: unknown[] } | undefined;
  return body?.messages ?? [];
}

describe("run worker", () => {
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

    const record = await runRecord(stack, "run-text");
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
      const record = await runRecord(stack, run.runId);
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
    const record = await runRecord(stack, "run-tools");
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
    const freshRecord = await runRecord(stack, "run-new");
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
    expect((await runRecord(stack, "run-lost-terminal")).status).toBe(RunStatus.COMPLETED);
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
