/**
 * The OpenAI- and Anthropic-compatible HTTP front of the provider gateway:
 * the team's other coding agents (Claude Code, Codex, Qwen Code, opencode, any
 * app on the official SDKs) use the same member keys, BYOK routes, provider
 * keys and call accounting as Cursor runs.
 *
 *   POST /v1/chat/completions        OpenAI Chat Completions
 *   POST /v1/responses               OpenAI Responses
 *   POST /v1/messages                Anthropic Messages (?beta=true, anthropic-beta passed on)
 *   POST /v1/messages/count_tokens   Anthropic token counting
 *   GET  /v1/models                  the BYOK models (Anthropic shape when anthropic-version is sent)
 *
 * Every request: member key (Authorization: Bearer or x-api-key, checked with
 * the store's member.verify, cached) -> body -> model (a BYOK model id or
 * alias) -> admission by the call accounting (the same seam as the NATS path)
 * -> the same-shape relay when the client speaks the route's endpoint kind,
 * else translation through the neutral ModelRequest/ModelEvent -> settle
 * with the reported usage. Errors go out in the client's format
 * (client-errors.ts).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "@byok/platform";
import type { AdmissionDecision, CallAccounting, CallUsage } from "../accounting/call-accounting.ts";
import type { CallPath } from "../accounting/call-metrics.ts";
import { estimateJsonTokens } from "../accounting/estimate-tokens.ts";
import type { BoundAdapter } from "../adapters/adapter.ts";
import type { InboundConfig } from "../config.ts";
import type { ProviderGatewayMetrics } from "../metrics.ts";
import { GATEWAY_SHUTDOWN } from "../model-call.ts";
import { DEFAULT_BACKOFF, type RetryPolicy } from "../retry.ts";
import { InboundError } from "./client-errors.ts";
import { clientKindOf, type ClientFormat } from "./client-format.ts";
import { countTokens } from "./count-tokens.ts";
import { sendError, sendJson } from "./http-answers.ts";
import { InboundCall, type CallResult } from "./inbound-call.ts";
import type { MemberKeys } from "./member-keys.ts";
import { modelList } from "./model-list.ts";
import type { ReplayStore } from "./replay-store.ts";
import { relaySameShape } from "./same-shape.ts";
import { translateCall } from "./translate/translated-call.ts";

export interface InboundServerOptions {
  readonly config: InboundConfig;
  /** Bound adapters by route id. */
  readonly adapters: ReadonlyMap<string, BoundAdapter>;
  readonly memberKeys: MemberKeys;
  readonly accounting: CallAccounting;
  /** The gateway's series (metrics.ts): calls, timings, tokens, limit rejections. */
  readonly metrics: ProviderGatewayMetrics;
  readonly replay: ReplayStore;
  readonly log: Logger;
  readonly maxRetryAfterMs: number;
  readonly backoff?: { readonly baseDelayMs?: number; readonly maxDelayMs?: number } | undefined;
}

export interface InboundServer {
  /** http://host:port */
  readonly url: string;
  inFlight(): number;
  /** Stop listening, end the running requests and wait for them. */
  stop(): Promise<void>;
}

type Endpoint = { readonly kind: "model-call"; readonly format: ClientFormat } | { readonly kind: "count-tokens" } | { readonly kind: "models" } | { readonly kind: "health" };

const MODEL_CALLS: Readonly<Record<string, ClientFormat>> = {
  "/v1/chat/completions": "openai-chat",
  "/v1/responses": "openai-responses",
  "/v1/messages": "anthropic",
};

export async function startInboundServer(options: InboundServerOptions): Promise<InboundServer> {
  const { config, log } = options;
  const byName = new Map<string, BoundAdapter>();
  for (const adapter of options.adapters.values()) {
    byName.set(adapter.route.id, adapter);
    for (const alias of adapter.route.aliases) byName.set(alias, adapter);
  }
  const running = new Map<Promise<void>, AbortController>();
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const controller = new AbortController();
    const call = handle(options, byName, req, res, controller).catch((error: unknown) => {
      log.error({ err: error }, "inbound request handler failed");
      if (!res.headersSent) sendJson(res, 500, { error: { message: "internal gateway error", type: "api_error", param: null, code: null } });
      else res.destroy();
    });
    running.set(call, controller);
    void call.finally(() => running.delete(call));
  });
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  log.info({ url }, "inbound API listening");
  return {
    url,
    inFlight: () => running.size,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const controller of running.values()) controller.abort(GATEWAY_SHUTDOWN);
      await Promise.allSettled([...running.keys()]);
      server.closeAllConnections();
      await closed;
    },
  };
}

async function handle(options: InboundServerOptions, byName: ReadonlyMap<string, BoundAdapter>, req: IncomingMessage, res: ServerResponse, controller: AbortController): Promise<void> {
  const started = Date.now();
  const receivedAt = performance.now();
  const { pathname, query } = splitTarget(req.url ?? "/");
  const endpoint = endpointOf(req.method ?? "GET", pathname);
  // Before the body says otherwise: Anthropic clients send anthropic-version and use /v1/messages.
  let format: ClientFormat = endpoint?.kind === "model-call" ? endpoint.format : pathname.startsWith("/v1/messages") || req.headers["anthropic-version"] !== undefined ? "anthropic" : "openai-chat";
  const requestId = `req_${randomUUID().replaceAll("-", "")}`;
  res.setHeader("x-request-id", requestId);
  // Child loggers are made when a line is logged: most requests log nothing at the level in force.
  const log = lazyChild(() => options.log, { request_id: requestId });
  res.on("close", () => {
    if (!res.writableFinished) controller.abort("the client went away");
  });
  try {
    if (endpoint === undefined) throw new InboundError("not_found", `no such endpoint: ${req.method ?? "GET"} ${pathname}`);
    if (endpoint.kind === "health") {
      // Readiness of the listener (Kubernetes probes): no key needed, nothing about the gateway in the answer.
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    const memberId = await authenticate(options.memberKeys, req);
    if (endpoint.kind === "models") {
      modelList(res, req, [...options.adapters.values()].map((a) => a.route));
      return;
    }
    const body = await readJsonBody(req, options.config.maxBodyBytes);
    const model = body["model"];
    if (typeof model !== "string" || model === "") throw new InboundError("invalid_request", "model: a model name is required", { param: "model" });
    const adapter = byName.get(model);
    if (adapter === undefined)
      throw new InboundError("not_found", `model ${JSON.stringify(model)} is not a model of this gateway (GET /v1/models lists them)`, { param: "model", code: "model_not_found" });
    const policy: RetryPolicy = {
      maxAttempts: adapter.route.maxAttempts,
      baseDelayMs: options.backoff?.baseDelayMs ?? DEFAULT_BACKOFF.baseDelayMs,
      maxDelayMs: options.backoff?.maxDelayMs ?? DEFAULT_BACKOFF.maxDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs,
    };
    if (endpoint.kind === "count-tokens") {
      format = "anthropic";
      checkShape("anthropic", body);
      const call = new InboundCall({ format, adapter, body, stream: false, requestedModel: model, memberId, requestId, headers: req.headers, query, res, signal: controller.signal, log, policy, started });
      await countTokens(call);
      return;
    }
    checkShape(format, body);
    const stream = body["stream"] === true;
    const call = new InboundCall({ format, adapter, body, stream, requestedModel: model, memberId, requestId, headers: req.headers, query, res, signal: controller.signal, log, policy, started });
    await modelCall(options, call, receivedAt);
  } catch (error) {
    if (!(error instanceof InboundError)) throw error;
    if (options.log.isLevelEnabled("info")) log().info({ status: error.status, reason: error.message, duration_ms: Date.now() - started }, "inbound request refused");
    sendError(res, format, error);
  }
}

async function modelCall(options: InboundServerOptions, call: InboundCall, receivedAt: number): Promise<void> {
  const { route } = call;
  const clientKind = clientKindOf(call.format);
  const path: CallPath = route.kind === call.format ? "same-shape" : "translated";
  const metric = { clientKind, routeId: route.id, path };
  const maxOutputTokens = maxTokensOf(call.body) ?? route.maxOutputTokens;
  let decision: AdmissionDecision;
  try {
    decision = await options.accounting.admit({
      memberId: call.memberId,
      clientKind,
      routeId: route.id,
      providerId: route.providerId,
      upstreamModel: route.upstreamModel,
      call: { kind: "request", requestId: call.requestId },
      inputTokenEstimate: estimateJsonTokens(call.body),
      maxOutputTokens,
    });
  } catch (error) {
    call.log.error({ err: error }, "call accounting failed to admit the call");
    throw new InboundError("unavailable", "the gateway's call accounting is unavailable");
  }
  switch (decision.kind) {
    case "admitted":
      break;
    case "rejected":
      options.metrics.recordLimitRejection(decision.limit);
      throw new InboundError("rate_limit", decision.message, { code: decision.limit, retryAfterMs: decision.retryAfterMs });
    case "forbidden":
      throw new InboundError("permission", decision.message, { param: "model", code: "model_not_allowed" });
    default: {
      const never: never = decision;
      throw new Error(`unknown admission ${JSON.stringify(never)}`);
    }
  }
  options.metrics.callStarted(metric);
  call.observer = options.metrics.modelCall(route.id, receivedAt);
  let result: CallResult = { outcome: "failed", usage: undefined, firstByteMs: undefined };
  try {
    result = path === "same-shape" ? await relaySameShape(call) : await translateCall(call, options.replay);
  } finally {
    const usage: CallUsage | undefined = result.usage;
    options.accounting.settle(decision.ticket, usage, result.outcome).catch((error: unknown) => call.log.error({ err: error }, "call accounting failed to settle the call"));
    const durationMs = Date.now() - call.started;
    options.metrics.callEnded({ ...metric, outcome: result.outcome, durationMs, firstByteMs: result.firstByteMs, usage });
    if (options.log.isLevelEnabled("info")) {
      call.log.info(
        { route: route.id, format: call.format, path, stream: call.stream, outcome: result.outcome, duration_ms: durationMs, first_byte_ms: result.firstByteMs, input_tokens: usage?.inputTokens, output_tokens: usage?.outputTokens },
        "inbound model call ended",
      );
    }
  }
}

/** A child of `parent()` with `bindings`, made on first use. */
function lazyChild(parent: () => Logger, bindings: Record<string, string>): () => Logger {
  let child: Logger | undefined;
  return () => (child ??= parent().child(bindings));
}

/** Path and query of a request target; the query is parsed only when there is one. */
function splitTarget(target: string): { pathname: string; query: URLSearchParams } {
  if (!target.startsWith("/")) {
    const url = new URL(target, "http://inbound");
    return { pathname: url.pathname, query: url.searchParams };
  }
  const mark = target.indexOf("?");
  const hash = target.indexOf("#");
  if (mark === -1 && hash === -1) return { pathname: target, query: new URLSearchParams() };
  const url = new URL(target, "http://inbound");
  return { pathname: url.pathname, query: url.searchParams };
}

function endpointOf(method: string, path: string): Endpoint | undefined {
  const format = MODEL_CALLS[path];
  if (format !== undefined) return method === "POST" ? { kind: "model-call", format } : undefined;
  if (path === "/v1/messages/count_tokens") return method === "POST" ? { kind: "count-tokens" } : undefined;
  if (path === "/v1/models") return method === "GET" ? { kind: "models" } : undefined;
  if (path === "/healthz") return method === "GET" ? { kind: "health" } : undefined;
  return undefined;
}

async function authenticate(memberKeys: MemberKeys, req: IncomingMessage): Promise<string> {
  const authorization = req.headers["authorization"];
  const bearer = typeof authorization === "string" && /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, "").trim() : undefined;
  const apiKey = req.headers["x-api-key"];
  const key = bearer ?? (typeof apiKey === "string" ? apiKey.trim() : undefined);
  if (key === undefined || key === "") throw new InboundError("authentication", "a member key is required (Authorization: Bearer <key> or x-api-key: <key>)");
  const lookup = await memberKeys.verify(key);
  switch (lookup.kind) {
    case "member":
      return lookup.memberId;
    case "unknown":
      throw new InboundError("authentication", "invalid member key", { code: "invalid_api_key" });
    case "unavailable":
      throw new InboundError("unavailable", "the member key cannot be checked right now; try again");
    default: {
      const never: never = lookup;
      throw new Error(`unknown lookup ${JSON.stringify(never)}`);
    }
  }
}

async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const declared = Number(req.headers["content-length"] ?? "0");
  const tooLarge = (): InboundError => new InboundError("invalid_request", `the request body is larger than ${maxBytes} bytes`, { status: 413, code: "request_too_large" });
  if (declared > maxBytes) throw tooLarge();
  // The whole body is in the stream's buffer already (it usually comes with the head): taken at once.
  const buffered = req.readableFlowing === null && (req.complete || (declared > 0 && req.readableLength === declared));
  const text = buffered ? bufferedBody(req, maxBytes, tooLarge) : await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners("data");
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8")));
    req.once("error", reject);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InboundError("invalid_request", "the request body is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InboundError("invalid_request", "the request body must be a JSON object");
  return value as Record<string, unknown>;
}

/**
 * The body of a request whose bytes are all buffered (its Content-Length
 * worth, or the message is complete): read at once, without waiting for its
 * 'data' and 'end' events; the stream is left flowing so that it ends.
 */
function bufferedBody(req: IncomingMessage, maxBytes: number, tooLarge: () => InboundError): string {
  const data = req.read() as Buffer | null;
  req.resume();
  if (data === null) return "";
  if (data.length > maxBytes) throw tooLarge();
  return data.toString("utf8");
}

/** The few fields the gateway itself needs before passing or translating a request. */
function checkShape(format: ClientFormat, body: Record<string, unknown>): void {
  if (body["stream"] !== undefined && typeof body["stream"] !== "boolean") throw new InboundError("invalid_request", "stream: must be a boolean", { param: "stream" });
  switch (format) {
    case "openai-chat":
      if (!Array.isArray(body["messages"])) throw new InboundError("invalid_request", "messages: an array of messages is required", { param: "messages" });
      return;
    case "openai-responses":
      if (typeof body["input"] !== "string" && !Array.isArray(body["input"])) throw new InboundError("invalid_request", "input: a string or an array of input items is required", { param: "input" });
      return;
    case "anthropic":
      if (!Array.isArray(body["messages"])) throw new InboundError("invalid_request", "messages: an array of messages is required", { param: "messages" });
      return;
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}

function maxTokensOf(body: Record<string, unknown>): number | undefined {
  for (const key of ["max_completion_tokens", "max_output_tokens", "max_tokens"]) {
    const value = body[key];
    if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}
