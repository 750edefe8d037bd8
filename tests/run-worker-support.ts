/**
 * Shared setup of the run worker end-to-end tests (tests/run-worker-*.test.ts):
 * the real store (fresh Postgres database), the real provider gateway
 * (answering from the mock LLM over HTTP), one or more real run workers, and a
 * small client-side double of the adapter (tests/support/run-client-double.ts)
 * that publishes PreparedRuns, answers state events and sends tool results and
 * cancels. Also the synthetic OpenAI chat streams the mock LLM sends and readers
 * for what the runs produced.
 *
 *   afterEach(stopStacks);
 *   const stack = await startStack({ workers: 2 });
 */
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import {
  busNames,
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
import { busRequest } from "@byok/platform";
import { loadConfig as loadStoreConfig } from "../services/store/src/config.ts";
import { startStore } from "../services/store/src/service.ts";
import { loadConfig as loadGatewayConfig } from "../services/provider-gateway/src/config.ts";
import { startProviderGateway } from "../services/provider-gateway/src/service.ts";
import { loadConfig as loadWorkerConfig } from "../services/run-worker/src/config.ts";
import { startRunWorker, type RunWorker } from "../services/run-worker/src/service.ts";
import { createTestBus, createTestDatabase, waitFor } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { startRunClientDouble, type RunClientDouble } from "./run-client-double.ts";
import { serviceLogger } from "@byok/test-support/service-logger";

const MODEL_ID = "byok-run-worker-test";
const KEY_ENV = "RUN_WORKER_TEST_LLM_KEY";

// ---- synthetic OpenAI chat streams (what the mock LLM sends) ----

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): unknown {
  return { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

function usageChunk(prompt: number, completion: number): unknown {
  return { id: "chatcmpl-test", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
}

export function textAnswer(text: string, usage: [number, number] = [20, 5]): unknown[] {
  return [chunk({ role: "assistant", content: "" }), ...text.split(/(?<= )/).map((t) => chunk({ content: t })), chunk({}, "stop"), usageChunk(...usage)];
}

export function toolCalls(text: string, calls: Array<{ id: string; name: string; args: string }>, usage: [number, number] = [30, 9]): unknown[] {
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

export interface Stack {
  readonly names: BusNames;
  /** The store's database (tests that hold a row lock to keep a store operation waiting). */
  readonly databaseUrl: string;
  readonly llm: MockLlm;
  /** Model calls the provider gateway is running now. */
  gatewayInFlight(): number;
  readonly client: RunClientDouble;
  readonly workers: RunWorker[];
  startWorker(env?: Record<string, string>): Promise<RunWorker>;
  store<K extends keyof StoreOperations>(op: K, request: MessageInitShape<StoreOperations[K]["request"]>): Promise<MessageShape<StoreOperations[K]["response"]>>;
  /** The messages of a revision, oldest first. */
  history(revisionId: string): Promise<Message[]>;
}

const cleanups: Array<() => Promise<unknown>> = [];

/** Stops every stack started since the last call, newest part first (for afterEach). */
export async function stopStacks(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export async function startStack(options: { workers?: number; workerEnv?: Record<string, string> } = {}): Promise<Stack> {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const bus = createTestBus();
  cleanups.push(() => bus.cleanup());
  const llm = await startMockLlm();
  cleanups.push(() => llm.stop());
  const names = busNames(bus.prefix);
  const busEnv = { NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, LOG_LEVEL: process.env["HARNESS_LOG_LEVEL"] || "silent" };

  const store = await startStore(loadStoreConfig({ ...busEnv, DATABASE_URL: db.url }), { log: serviceLogger("store") });
  cleanups.push(() => store.stop());
  const gatewayConfig = JSON.stringify({
    providers: { mock: { kind: "openai-chat", baseUrl: llm.baseUrl("openai-chat"), apiKeyEnv: KEY_ENV, maxAttempts: 1 } },
    models: [{ id: MODEL_ID, displayName: "Run worker test model", provider: "mock", upstreamModel: "gpt-4o" }],
  });
  const gateway = await startProviderGateway(loadGatewayConfig({ ...busEnv, [KEY_ENV]: "mock-key-not-a-secret" }, () => gatewayConfig), {
    log: serviceLogger("provider-gateway"),
  });
  cleanups.push(() => gateway.stop());

  const workers: RunWorker[] = [];
  const startWorker = async (env: Record<string, string> = {}): Promise<RunWorker> => {
    const id = `test-worker-${workers.length + 1}`;
    const worker = await startRunWorker(loadWorkerConfig({ ...busEnv, WORKER_ID: id, ...options.workerEnv, ...env }), { log: serviceLogger(id) });
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
    databaseUrl: db.url,
    llm,
    gatewayInFlight: () => gateway.inFlight(),
    client,
    workers,
    startWorker,
    store: storeRequest,
    async history(revisionId) {
      return (await storeRequest("getRevisionMessages", { revisionId })).messages;
    },
  };
}

export function userText(text: string): MessageInitShape<typeof MessageSchema> {
  return { body: { case: "user", value: { clientId: `user:${text}`, origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } };
}

type PreparedInit = MessageInitShape<typeof PreparedRunSchema>;

export function prepared(runId: string, conversationId: string, text: string, extra: { action?: NonNullable<Extract<PreparedInit, { runId?: string }>["action"]>; baseRevisionId?: string } = {}): PreparedInit {
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

export function committed(states: StateEvent[]): StateCommitted[] {
  return states.flatMap((s) => (s.event.case === "stateCommitted" ? [s.event.value] : []));
}

export function textOf(message: Message | undefined): string {
  if (message?.body.case !== "assistant" && message?.body.case !== "user") return "";
  return message.body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("");
}

export async function runRecord(stack: Stack, runId: string) {
  const { run } = await stack.store("getRun", { runId });
  if (run === undefined) throw new Error(`run ${runId} not in the store`);
  return run;
}

/** The run's record once its end is recorded (a completed run's terminal goes out with run.finish, not after it). */
export function endedRecord(stack: Stack, runId: string) {
  return waitFor(async () => {
    const run = await runRecord(stack, runId);
    return run.status !== RunStatus.RUNNING && run;
  }, `run ${runId} to end in the store`);
}

/** Messages the LLM received in its n-th request (0-based). */
export function llmMessages(llm: MockLlm, n: number): unknown[] {
  const body = llm.requestsTo("openai-chat")[n]?.body as { messages?: unknown[] } | undefined;
  return body?.messages ?? [];
}
