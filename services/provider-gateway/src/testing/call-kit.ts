/**
 * Test kit for the provider gateway's own tests: routes pointing at the mock
 * LLM, neutral ModelRequests, and one call through the real adapter + SDK +
 * HTTP, collecting the ModelEvents it emits.
 */
import { readFileSync } from "node:fs";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  ModelFailureKind,
  ModelRequestSchema,
  type AssistantMessage,
  type MessageSchema,
  type ModelRequest,
  type ToolDefinitionSchema,
} from "@byok/contracts";
import { ModelStreamAssembly, ModelStreamChecker } from "@byok/model-stream";
import { silentLogger, type ProviderKind } from "@byok/platform";
import type { MockLlm, MockResponse, RecordedRequest } from "@byok/test-support/mock-llm";
import { adapterFor } from "../adapters/index.ts";
import type { ModelEventBody } from "../events.ts";
import { runModelCall } from "../model-call.ts";
import { summarizeEvents, type CallSummary } from "../replay/call-summary.ts";
import type { Route } from "../routes.ts";
import { Secret } from "../secret.ts";

export const FIXTURE_KINDS: readonly ProviderKind[] = ["openai-chat", "openai-responses", "anthropic"];

export function testRoute(kind: ProviderKind, llm: Pick<MockLlm, "baseUrl">, overrides: Partial<Route> = {}): Route {
  return {
    id: `test-${kind}`,
    displayName: `Test ${kind}`,
    aliases: [],
    kind,
    providerId: "mock",
    upstreamModel: `${kind}-upstream-model`,
    baseUrl: llm.baseUrl(kind),
    apiKey: new Secret("test-key-not-secret"),
    headers: {},
    maxAttempts: 1,
    headersTimeoutMs: 10_000,
    contextWindow: 200_000,
    maxOutputTokens: 4096,
    effort: undefined,
    efforts: [],
    supportsThinking: false,
    supportsImages: false,
    thinkingBudgetTokens: undefined,
    replayReasoningContent: false,
    reasoningSummary: undefined,
    promptCaching: false,
    promptCacheBreakpoints: "automatic",
    ...overrides,
  };
}

export type MessageInit = MessageInitShape<typeof MessageSchema>;

export function userText(text: string): MessageInit {
  return { body: { case: "user", value: { content: [{ part: { case: "text", value: { text } } }] } } };
}

export function toolResult(callId: string, toolName: string, content: string): MessageInit {
  return { body: { case: "toolResult", value: { callId, toolName, content } } };
}

export function assistant(message: AssistantMessage): MessageInit {
  return { body: { case: "assistant", value: message } };
}

export interface RequestInit {
  readonly route: Route;
  readonly messages: readonly MessageInit[];
  readonly system?: string;
  readonly tools?: ReadonlyArray<MessageInitShape<typeof ToolDefinitionSchema>>;
  readonly spec?: { effort?: string; maxOutputTokens?: number; contextWindow?: number; fast?: boolean };
  readonly callId?: string;
}

export function modelRequest(init: RequestInit): ModelRequest {
  return create(ModelRequestSchema, {
    callId: init.callId ?? "run-1:1",
    runId: "run-1",
    conversationId: "conversation-1",
    memberId: "member-1",
    spec: { modelId: init.route.id, ...init.spec },
    prompt: { mode: "agent", systemText: init.system ?? "", tools: [...(init.tools ?? [])] },
    messages: [...init.messages],
  });
}

export interface CallResult {
  readonly events: ModelEventBody[];
  readonly summary: CallSummary;
  /** The request the mock received for this call (the last one when retried). */
  readonly upstream: RecordedRequest | undefined;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Sees every event as it is emitted. */
  readonly onEvent?: (event: ModelEventBody) => void;
  readonly backoff?: { baseDelayMs?: number; maxDelayMs?: number };
}

/** Run one call through the real adapter against the mock; `response` (if given) is queued first. */
export async function callThroughMock(
  llm: MockLlm,
  route: Route,
  request: ModelRequest,
  response?: MockResponse,
  options: CallOptions = {},
): Promise<CallResult> {
  if (response !== undefined) llm.enqueue(response);
  const before = llm.requests.length;
  const events: ModelEventBody[] = [];
  await runModelCall(adapterFor(route.kind).bind(route, silentLogger()), request, (e) => {
    events.push(e);
    options.onEvent?.(e);
  }, {
    signal: options.signal ?? new AbortController().signal,
    log: silentLogger(),
    backoff: options.backoff ?? { baseDelayMs: 10, maxDelayMs: 20 },
  });
  return { events, summary: summarizeEvents(events), upstream: llm.requests.length > before ? llm.requests[llm.requests.length - 1] : undefined };
}

/**
 * Prefix stability: the request body of call n, minus the closing brackets of
 * its last key (the history list), is a byte prefix of call n+1's body.
 */
export function historyPrefixOf(first: string, second: string): boolean {
  if (!first.endsWith("]}")) return false;
  const prefix = first.slice(0, -2);
  return second.startsWith(prefix) && second.charAt(prefix.length) === ",";
}

/** A fixture's recorded request ({method, uri, body}). */
export function recordedRequest(file: string): { uri: string; body: Record<string, any> } { // eslint-disable-line @typescript-eslint/no-explicit-any -- recorded JSON
  return JSON.parse(readFileSync(file, "utf8")) as { uri: string; body: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any -- recorded JSON
}

/**
 * What the shared stream rules (@byok/model-stream, the table the run
 * worker's ModelCycle applies) make of an event stream: the gateway must never
 * send a stream they refuse; a failure is the one the gateway itself reported.
 */
export function cycleOutcome(events: readonly ModelEventBody[]): { kind: string; failure?: string } {
  const rules = new ModelStreamChecker();
  for (const event of events) {
    const verdict = rules.accept(event);
    if (verdict.kind === "violation") return { kind: "failed", failure: ModelFailureKind[ModelFailureKind.PROTOCOL] };
    if (event.case === "done") return { kind: "completed" };
    if (event.case === "failure") return { kind: "failed", failure: ModelFailureKind[event.value.kind ?? ModelFailureKind.UNSPECIFIED] };
  }
  return { kind: "unfinished" };
}

/** The assistant message a caller stores for a call: one part per non-empty block, in block order, plus the replay state. */
export function assistantMessageOf(events: readonly ModelEventBody[]): AssistantMessage {
  const assembly = new ModelStreamAssembly();
  for (const event of events) assembly.add(event);
  const replay = events.find((e) => e.case === "replay");
  return assembly.assistantMessage(replay?.case === "replay" ? replay.value : undefined).message;
}

/** For tests that only build requests: a base URL nobody listens on. */
export const NO_UPSTREAM: Pick<MockLlm, "baseUrl"> = { baseUrl: (kind) => (kind === "anthropic" ? "http://127.0.0.1:9" : "http://127.0.0.1:9/v1") };

/** The body an adapter builds for a request, or the rejection. */
export function prepareBody(route: Route, request: ModelRequest): { kind: "ready"; body: Record<string, any> } | { kind: "rejected"; rejection: string; message: string } { // eslint-disable-line @typescript-eslint/no-explicit-any -- endpoint JSON
  const prepared = adapterFor(route.kind).bind(route, silentLogger()).prepare(request);
  return prepared.kind === "ready" ? { kind: "ready", body: JSON.parse(JSON.stringify(prepared.body)) as Record<string, any> } : prepared; // eslint-disable-line @typescript-eslint/no-explicit-any -- endpoint JSON
}
