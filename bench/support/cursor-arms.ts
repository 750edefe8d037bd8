/**
 * The two arms of the Cursor path benchmark, and what the mock upstream sends.
 *
 * - direct: the bench process calls the mock LLM itself (the official `openai`
 *   SDK, the same request a Cursor turn causes: the history plus the prompt);
 * - gateway: the fake Cursor client runs the turn (RunSSE + BidiAppend, KV
 *   ACKs, checkpoints) through the deployed gateway, straight to the cursor
 *   adapter or through the edge proxy (CONNECT tunnel, team CA, member key).
 *
 * Both arms see the same upstream stream: `chunkCount` text deltas, all at
 * once (one socket write) or paced (one every `intervalMs` on the mock's own
 * clock: a delta sent late, when the bench process was busy, does not push the
 * later ones back, so a stream's length does not depend on the bench's load).
 * The mock LLM runs in the bench process and answers each turn with what the
 * turn queued; the open-runs phases' paced streams come from a process of
 * their own instead (`PacedUpstream`, paced-upstream.ts), on a model of their
 * own in the gateway's config, so hundreds of them do not share the fake
 * clients' event loop.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import OpenAI from "openai";
import { agent } from "@byok/cursor-protocol";
import { FakeCursorClient, type FakeConversation, type RunResult, type TimelineEntry } from "@byok/test-support/fake-cursor";
import { HARNESS_MOCK_KEY_ENV, HARNESS_MODEL_ID, type HarnessGatewayConfig } from "@byok/test-support/gateway-harness";
import type { MockLlm, StaticMockResponse } from "@byok/test-support/mock-llm";
import { chatDeltaStream } from "@byok/test-support/provider-streams";
import type { Deployment } from "./deployment.ts";
import { startHelper, type HelperProcess } from "./helper-process.ts";

/** What a turn's upstream sends: a response the turn queues on the mock LLM, or the paced upstream's stream on its own model. */
export type UpstreamStream =
  | { readonly kind: "mock"; readonly response: StaticMockResponse; readonly text: string }
  | { readonly kind: "paced"; readonly modelId: string; readonly baseUrl: string; readonly text: string };

export type MockStream = Extract<UpstreamStream, { kind: "mock" }>;

/** The id of the bench's streams (bench/support/paced-upstream.ts sends the same). */
const STREAM_ID = "chatcmpl-bench";

/** A chat-completions stream of `chunkCount` text deltas: in one write, or one every `intervalMs` (a fixed schedule). */
export function textStream(chunkCount: number, intervalMs?: number): MockStream {
  return { kind: "mock", ...chatDeltaStream(STREAM_ID, chunkCount, intervalMs === undefined ? { burst: true } : { eventEveryMs: intervalMs }) };
}

/**
 * The paced upstream process and one BYOK model per stream length on it
 * ("bench-paced-<deltas>", its provider's base URL naming the length). Started
 * before the deployment, whose gateway config `configure` extends.
 */
export class PacedUpstream {
  readonly #helper: HelperProcess;
  readonly #deltaCounts: readonly number[];

  private constructor(helper: HelperProcess, deltaCounts: readonly number[]) {
    this.#helper = helper;
    this.#deltaCounts = deltaCounts;
  }

  static async start(intervalMs: number, deltaCounts: readonly number[]): Promise<PacedUpstream> {
    return new PacedUpstream(await startHelper("bench/support/paced-upstream.ts", String(intervalMs)), [...new Set(deltaCounts)]);
  }

  get pid(): number {
    return this.#helper.pid;
  }

  #baseUrl(deltas: number): string {
    return `http://127.0.0.1:${this.#helper.port}/n/${deltas}/v1`;
  }

  /** Adds a provider and a model per stream length to the gateway config (HarnessGatewayConfigOptions.configure). */
  configure(config: HarnessGatewayConfig): void {
    for (const deltas of this.#deltaCounts) {
      config.providers[`paced-${deltas}`] = { kind: "openai-chat", baseUrl: this.#baseUrl(deltas), apiKeyEnv: HARNESS_MOCK_KEY_ENV, maxAttempts: 1 };
      config.models.push({ id: `bench-paced-${deltas}`, displayName: `Paced ${deltas}`, provider: `paced-${deltas}`, upstreamModel: "gpt-4o", contextWindow: 128_000 });
    }
  }

  /** The stream of `deltas` text deltas (one of the lengths it was started with). */
  stream(deltas: number): UpstreamStream {
    if (!this.#deltaCounts.includes(deltas)) throw new Error(`the paced upstream serves ${this.#deltaCounts.join(", ")} deltas, not ${deltas}`);
    return { kind: "paced", modelId: `bench-paced-${deltas}`, baseUrl: this.#baseUrl(deltas), text: chatDeltaStream(STREAM_ID, deltas).text };
  }

  stop(): Promise<void> {
    return this.#helper.stop();
  }
}

/** One measured turn, ms from its start. */
export interface TurnTiming {
  readonly firstTextMs: number;
  /** Direct: the SDK stream is done. Gateway: the EndStream envelope arrived. */
  readonly endMs: number;
  /**
   * The mock took the upstream request this turn's response was queued for. Meaningful one turn at a
   * time only: with many turns at once the mock's queue is shared, so it may be another turn's request.
   * NaN on the paced upstream, which keeps nothing per request.
   */
  readonly upstreamMs: number;
}

export class TurnFailure extends Error {
  override readonly name = "TurnFailure";
}

export type ChatMessage = { role: "user" | "assistant"; content: string };

export class DirectArm {
  readonly #llm: MockLlm;
  readonly #timeoutMs: number;
  /** An SDK client per upstream base URL (the mock LLM's, the paced upstream's). */
  readonly #clients = new Map<string, OpenAI>();

  constructor(llm: MockLlm, timeoutMs: number) {
    this.#llm = llm;
    this.#timeoutMs = timeoutMs;
  }

  #client(baseURL: string): OpenAI {
    let client = this.#clients.get(baseURL);
    if (client === undefined) {
      client = new OpenAI({ apiKey: "mock-llm-key-not-a-secret", baseURL, maxRetries: 0, timeout: this.#timeoutMs });
      this.#clients.set(baseURL, client);
    }
    return client;
  }

  async turn(stream: UpstreamStream, history: readonly ChatMessage[], prompt: string): Promise<TurnTiming> {
    const upstream = queueOnMock(this.#llm, stream);
    const start = performance.now();
    const response = await this.#client(stream.kind === "mock" ? this.#llm.baseUrl("openai-chat") : stream.baseUrl).chat.completions.create({ model: "gpt-4o", messages: [...history, { role: "user", content: prompt }], stream: true, stream_options: { include_usage: true } });
    let firstText: number | undefined;
    let text = "";
    for await (const chunk of response) {
      const content = chunk.choices[0]?.delta?.content;
      if (content === undefined || content === null || content === "") continue;
      firstText ??= performance.now();
      text += content;
    }
    const end = performance.now();
    if (text !== stream.text || firstText === undefined) throw new TurnFailure(`direct stream text differs from the upstream's (${text.length} chars)`);
    return { firstTextMs: firstText - start, endMs: end - start, upstreamMs: (await upstream) - start };
  }
}

export type GatewayRoute = "adapter" | "edge proxy";

/**
 * Each RunSSE holds a connection for the whole run and its BidiAppends need
 * others, so many runs at once need many connections; but one client with
 * thousands of sockets sends a run's 2,000 KV answers all at once, out of
 * order past the adapter's early-append bound. So: a pool of clients, each
 * with a moderate socket limit; wide phases spread conversations over it.
 */
const MAX_SOCKETS = 64;
const POOL_SIZE = 16;

export class GatewayArm {
  readonly route: GatewayRoute;
  /** The client of the one-at-a-time phases (its connections stay warm). */
  readonly client: FakeCursorClient;
  readonly #pool: FakeCursorClient[];
  #next = 0;
  readonly #llm: MockLlm;
  readonly #timeoutMs: number;

  private constructor(route: GatewayRoute, newClient: () => FakeCursorClient, llm: MockLlm, timeoutMs: number) {
    this.route = route;
    this.#pool = Array.from({ length: POOL_SIZE }, newClient);
    this.client = this.#pool[0]!;
    this.#llm = llm;
    this.#timeoutMs = timeoutMs;
  }

  static direct(deployment: Deployment, llm: MockLlm, timeoutMs: number): GatewayArm {
    return new GatewayArm("adapter", () => new FakeCursorClient({ transport: { baseUrl: deployment.adapterUrl, maxSockets: MAX_SOCKETS } }), llm, timeoutMs);
  }

  static async viaProxy(deployment: Deployment, llm: MockLlm, timeoutMs: number): Promise<GatewayArm> {
    const member = await deployment.createMember(`bench-${randomBytes(3).toString("hex")}`);
    const newClient = (): FakeCursorClient =>
      new FakeCursorClient({
        transport: {
          baseUrl: "https://api2.cursor.sh",
          proxy: { url: deployment.proxyUrl, authorization: `Basic ${Buffer.from(`${member.name}:${member.key}`).toString("base64")}` },
          ca: deployment.caPem,
          maxSockets: MAX_SOCKETS,
        },
      });
    return new GatewayArm("edge proxy", newClient, llm, timeoutMs);
  }

  /** A new conversation on the main client (one-at-a-time phases). */
  conversation(): FakeConversation {
    return this.client.conversation();
  }

  /** A new conversation on the next client of the pool (phases with many runs at once). */
  pooledConversation(): FakeConversation {
    const client = this.#pool[this.#next % this.#pool.length]!;
    this.#next += 1;
    return client.conversation();
  }

  async turn(stream: UpstreamStream, chat: FakeConversation, prompt: string): Promise<TurnTiming> {
    const upstream = queueOnMock(this.#llm, stream);
    const start = performance.now();
    const run = chat.send(prompt, { modelId: stream.kind === "mock" ? HARNESS_MODEL_ID : stream.modelId });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        run.disconnect();
        reject(new TurnFailure(`gateway turn ${run.requestId} (${this.route}) did not end within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
    });
    let result: RunResult;
    try {
      result = await Promise.race([run.finished, timeout]);
    } finally {
      clearTimeout(timer);
    }
    const problems: string[] = [];
    if (result.end.kind !== "ok") problems.push(`ended ${JSON.stringify(result.end)}`);
    if (result.violations.length > 0) problems.push(`violations: ${result.violations.join("; ")}`);
    if (result.text !== stream.text) problems.push(`text differs from the upstream's (${result.text.length} of ${stream.text.length} chars)`);
    const firstText = result.timeline.find(isTextDelta);
    const end = result.timeline.find((e) => e.kind === "end");
    if (firstText === undefined || end === undefined) problems.push("no text or no EndStream");
    if (problems.length > 0) throw new TurnFailure(`gateway turn ${result.requestId} (${this.route}): ${problems.join(", ")}; frames: ${result.describe()}`);
    return { firstTextMs: firstText!.at - start, endMs: end!.at - start, upstreamMs: (await upstream) - start };
  }

  async close(): Promise<void> {
    await Promise.all(this.#pool.map((c) => c.close()));
  }
}

/** Queues a mock stream's response on the mock LLM: when the mock took the request it answered with it (NaN for the paced upstream, which keeps nothing). */
function queueOnMock(llm: MockLlm, stream: UpstreamStream): Promise<number> {
  return stream.kind === "mock" ? llm.enqueue(stream.response).request.then(() => performance.now()) : Promise.resolve(Number.NaN);
}

function isTextDelta(e: TimelineEntry): boolean {
  if (e.kind !== "frame" || e.message.message.case !== "interactionUpdate") return false;
  const update = e.message.message.value.message;
  return update.case === "textDelta" && update.value.text !== "";
}

/**
 * A conversation whose settled checkpoint holds `messageCount` root messages
 * (user and assistant in turn, unique text so the store has none of the
 * blobs): the blobs are in the client's store (the adapter fetches them with
 * KV GETs), the same messages as chat history for the direct arm.
 */
export function longConversation(arm: GatewayArm, messageCount: number): { chat: FakeConversation; history: ChatMessage[] } {
  const nonce = randomBytes(6).toString("hex");
  const history: ChatMessage[] = [];
  const roots: Uint8Array[] = [];
  for (let i = 0; i < messageCount; i++) {
    const role = i % 2 === 0 ? "user" : "assistant";
    const text = `${role === "user" ? "question" : "answer"} ${i} of conversation ${nonce}: lorem ipsum dolor sit amet`;
    history.push({ role, content: text });
    const root = { role, id: `${nonce}-${i}`, content: [{ type: "text", text }] };
    roots.push(arm.client.blobs.put(new TextEncoder().encode(JSON.stringify(root))));
  }
  const chat = arm.conversation();
  if (chat.client !== arm.client) throw new Error("the long conversation must live on the client that holds its blobs");
  chat.state = create(agent.ConversationStateStructureSchema, { rootPromptMessagesJson: roots });
  return { chat, history };
}
