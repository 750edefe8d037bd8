/**
 * Shared pieces of the end-to-end tool tests (tests/tools-*.test.ts):
 * OpenAI Chat Completions streams with tool calls for the mock LLM (same chunk
 * shape as the recorded fixtures in packages/test-support/fixtures/providers/openai-chat)
 * and exec answers in the shape the IDE sends them (readers for what the mock
 * received: @byok/test-support/chat-requests).
 */
import { performance } from "node:perf_hooks";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { agent, tools } from "@byok/cursor-protocol";
import type { CursorRun, ExecContext, ExecHandlers, RunResult } from "@byok/test-support/fake-cursor";
import type { GatewayHarness } from "@byok/test-support/gateway-harness";
import type { RecordedRequest } from "@byok/test-support/mock-llm";

export interface StreamedCall {
  id: string;
  name: string;
  /** An object is JSON-encoded; a string is sent as is. */
  args: unknown;
}

const BASE = { object: "chat.completion.chunk", created: 1_782_955_817, model: "gpt-4o-2024-08-06", system_fingerprint: "fp_tools_test" };

/**
 * One assistant response as a chat completion stream: optional text, then the
 * tool calls (arguments streamed in `argChunk`-sized pieces), finish_reason
 * tool_calls (stop when there are none), a usage chunk and [DONE].
 */
export function chatStream(input: { id: string; text?: string; calls?: readonly StreamedCall[]; argChunk?: number; usage?: { prompt: number; completion: number } }): string {
  const chunks: unknown[] = [];
  const chunk = (delta: object, finish: string | null = null): void => {
    chunks.push({ id: input.id, ...BASE, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  };
  chunk({ role: "assistant", content: input.text === undefined ? null : "", refusal: null });
  for (const piece of splitText(input.text ?? "", 12)) chunk({ content: piece });
  const calls = input.calls ?? [];
  calls.forEach((call, index) => {
    const args = typeof call.args === "string" ? call.args : JSON.stringify(call.args);
    chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
    for (const piece of splitText(args, input.argChunk ?? 8)) chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  chunk({}, calls.length > 0 ? "tool_calls" : "stop");
  const usage = input.usage ?? { prompt: 100, completion: 20 };
  chunks.push({
    id: input.id,
    ...BASE,
    choices: [],
    usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
  });
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
}

function splitText(text: string, size: number): string[] {
  const pieces: string[] = [];
  const chars = [...text];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  return pieces;
}

/** Queues one response of the mock LLM; a function builds it from the request it answers. */
export function enqueueChat(gw: GatewayHarness, input: Parameters<typeof chatStream>[0] | ((request: RecordedRequest) => Parameters<typeof chatStream>[0])): void {
  gw.llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: typeof input === "function" ? (request) => chatStream(input(request)) : chatStream(input) });
}

// ---- frames the fake client received ----

export type ToolUpdateCase = "partialToolCall" | "toolCallStarted" | "toolCallDelta" | "toolCallCompleted";

export interface ToolUpdate {
  case: ToolUpdateCase;
  callId: string;
  order: number;
  at: number;
  update: agent.InteractionUpdate["message"];
}

/** Tool card updates in arrival order. */
export function toolUpdates(result: Pick<RunResult, "timeline">): ToolUpdate[] {
  const out: ToolUpdate[] = [];
  for (const entry of result.timeline) {
    if (entry.kind !== "frame" || entry.message.message.case !== "interactionUpdate") continue;
    const update = entry.message.message.value.message;
    switch (update.case) {
      case "partialToolCall":
      case "toolCallStarted":
      case "toolCallDelta":
      case "toolCallCompleted":
        out.push({ case: update.case, callId: update.value.callId, order: entry.order, at: entry.at, update });
        break;
      default:
        break;
    }
  }
  return out;
}

/** The completed card of a call (tool_call_completed.tool_call). */
export function completedCard(result: Pick<RunResult, "timeline">, callId: string): tools.ToolCall | undefined {
  const found = toolUpdates(result).find((u) => u.case === "toolCallCompleted" && u.callId === callId);
  return found?.update.case === "toolCallCompleted" ? found.update.value.toolCall : undefined;
}

/** Wall-clock (epoch ms) of a timeline entry, comparable with the mock LLM's receivedAt. */
export function epochOf(at: number): number {
  return performance.timeOrigin + at;
}

/**
 * The settled checkpoint of a tool round (no pending calls, read paths
 * recorded), and how many model requests the mock LLM had received when it
 * arrived. Call before awaiting the run so the count is taken at arrival.
 */
export function settledCheckpoint(run: CursorRun, gw: GatewayHarness, what: string): { frame: Promise<agent.AgentServerMessage>; requestsWhenSettled(): number | undefined } {
  let requestsWhenSettled: number | undefined;
  const frame = run.waitForFrame((m) => {
    const settled = m.message.case === "conversationCheckpointUpdate" && m.message.value.pendingToolCalls.length === 0 && m.message.value.readPaths.length > 0;
    if (settled && requestsWhenSettled === undefined) requestsWhenSettled = gw.llm.requests.length;
    return settled;
  }, what);
  return { frame, requestsWhenSettled: () => requestsWhenSettled };
}

// ---- exec answers ----

/** An exec_client_message payload (what ExecContext.result / reply take). */
export interface ExecResultInit {
  message: MessageInitShape<typeof agent.ExecClientMessageSchema>["message"];
}

export function execResult(message: ExecResultInit["message"]): ExecResultInit {
  return { message };
}

export function readSuccess(path: string, content: string): ExecResultInit {
  const lines = content === "" ? 0 : content.split("\n").length;
  return execResult({
    case: "readResult",
    value: { result: { case: "success", value: { path, totalLines: lines, fileSize: BigInt(Buffer.byteLength(content)), output: { case: "content", value: content } } } },
  });
}

export function readNotFound(path: string): ExecResultInit {
  return execResult({ case: "readResult", value: { result: { case: "fileNotFound", value: { path } } } });
}

export function writeSuccess(path: string, fileText: string): ExecResultInit {
  return execResult({ case: "writeResult", value: { result: { case: "success", value: { path, linesCreated: fileText.split("\n").length, fileSize: Buffer.byteLength(fileText) } } } });
}

/** The args of the exec's oneof (readArgs, writeArgs, ...). */
export function execArgs<T>(ctx: ExecContext): T {
  return ctx.exec.message.value as T;
}

/** Resolves once `count` execs arrived; each handler awaits its turn. */
export class ExecGate {
  readonly #arrived: ExecContext[] = [];
  readonly #waiters: Array<() => void> = [];
  readonly #count: number;

  constructor(count: number) {
    this.#count = count;
  }

  /** Call from an exec handler; resolves when all `count` execs have arrived. */
  arrive(ctx: ExecContext): Promise<ExecContext[]> {
    this.#arrived.push(ctx);
    if (this.#arrived.length >= this.#count) for (const w of this.#waiters.splice(0)) w();
    return this.all();
  }

  all(): Promise<ExecContext[]> {
    if (this.#arrived.length >= this.#count) return Promise.resolve([...this.#arrived]);
    return new Promise((resolve) => this.#waiters.push(() => resolve([...this.#arrived])));
  }
}

/** Read execs whose answers wait for the test: see holdReads. */
export interface HeldReads {
  /** Pass as the turn's onExec. */
  readonly onExec: ExecHandlers;
  /** Tool call ids of the Read execs, in arrival order. */
  readonly executed: readonly string[];
  /** Resolves when the first Read exec has arrived. */
  readonly started: Promise<void>;
  /** Lets the held execs answer. */
  release(): void;
}

/**
 * Read execs answered with `content(path)`; the calls `held` selects (default:
 * every call) answer only after `release()`, so a test can break something
 * while a tool runs in the IDE.
 */
export function holdReads(content: (path: string) => string, held: (toolCallId: string) => boolean = () => true): HeldReads {
  const executed: string[] = [];
  let started!: () => void;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const readArgs = async (ctx: ExecContext): Promise<void> => {
    const { path, toolCallId } = execArgs<tools.ReadArgs>(ctx);
    executed.push(toolCallId);
    started();
    if (held(toolCallId)) await released;
    await ctx.reply(readSuccess(path, content(path)));
  };
  return { onExec: { readArgs }, executed, started: startedPromise, release };
}

/** A run's result once finished, failing the test with the frame sequence when it did not end ok. */
export async function finishedOk(run: CursorRun): Promise<RunResult> {
  const result = await run.finished;
  if (result.end.kind !== "ok") throw new Error(`run ended with ${JSON.stringify(result.end)}; frames: ${result.describe()}; violations: ${result.violations.join(" | ")}`);
  return result;
}
