/**
 * The same-shape fast path: the client speaks the route's endpoint kind, so
 * its request goes upstream with the minimal change and the answer comes back
 * as the endpoint sent it.
 *
 * Minimal change: `model` becomes the route's upstream model; a streamed chat
 * request asks for usage (`stream_options.include_usage`; the usage chunk is
 * left out again for a client that did not ask); anthropic-beta /
 * anthropic-version headers and `?beta=true` are passed on; items the gateway
 * made up for another shape (gateway-markers.ts) are left out. The key is the
 * route's. Retries only before the first byte, as for every model call.
 *
 * Streaming: every chunk of the upstream body is written to the client as it
 * is delivered, before the next one (so each SSE event reaches the client
 * before the next one is read); the usage for the ledger is read from the
 * passing events (stream-watch.ts). The request goes out on undici's
 * dispatcher (upstream-http.ts explains why neither through the SDK nor on
 * node:http). A stream that breaks, or ends without the endpoint's terminal
 * signal, gets an error event in the client's format.
 */
import { StringDecoder } from "node:string_decoder";
import { ModelFailureKind } from "@byok/contracts";
import type { PassThroughRequest } from "../adapters/adapter.ts";
import { GATEWAY_SHUTDOWN } from "../model-call.ts";
import { openWithRetries } from "../retry.ts";
import { errorOfFailure, InboundError } from "./client-errors.ts";
import { GATEWAY_REASONING_ID_PREFIX, GATEWAY_THINKING_SIGNATURE } from "./gateway-markers.ts";
import { sendError, sseHead } from "./http-answers.ts";
import type { CallResult, InboundCall } from "./inbound-call.ts";
import { inStreamError } from "./in-stream-error.ts";
import { SseSplitter } from "./sse-splitter.ts";
import { bodyUsage, streamWatch } from "./stream-watch.ts";
import { sendUpstream, upstreamSendFailure, type UpstreamResponse } from "./upstream-http.ts";

interface SameShapeRequest extends PassThroughRequest {
  /** Leave the usage-only chunk out (chat: the gateway asked for usage, the client did not). */
  readonly dropUsageChunk: boolean;
}

/** The client's request with the minimal change for the route. */
export function sameShapeRequest(call: Pick<InboundCall, "format" | "route" | "body" | "stream" | "headers" | "query">, operation: PassThroughRequest["operation"] = "create"): SameShapeRequest {
  const body: Record<string, unknown> = { ...call.body, model: call.route.upstreamModel };
  let dropUsageChunk = false;
  const headers: Record<string, string> = {};
  const query: Record<string, string> = {};
  switch (call.format) {
    case "openai-chat": {
      const options = isRecord(body["stream_options"]) ? body["stream_options"] : {};
      if (call.stream && options["include_usage"] !== true) {
        body["stream_options"] = { ...options, include_usage: true };
        dropUsageChunk = true;
      }
      break;
    }
    case "openai-responses":
      if (Array.isArray(body["input"])) body["input"] = withoutGatewayReasoning(body["input"]);
      break;
    case "anthropic": {
      for (const name of ["anthropic-beta", "anthropic-version"]) {
        const value = call.headers[name];
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(",") : value;
      }
      const beta = call.query.get("beta");
      if (beta !== null) query["beta"] = beta;
      if (Array.isArray(body["messages"])) body["messages"] = withoutGatewayThinking(body["messages"]);
      break;
    }
    default: {
      const never: never = call.format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
  return { operation, body, stream: call.stream, headers, query, dropUsageChunk };
}

export async function relaySameShape(call: InboundCall, operation: PassThroughRequest["operation"] = "create"): Promise<CallResult> {
  const { res, adapter, format } = call;
  const request = sameShapeRequest(call, operation);
  const target = adapter.passThroughTarget(request);
  const body = JSON.stringify(request.body);
  const opened = await openWithRetries(
    (signal) => {
      call.observer?.requestSent();
      return sendUpstream(target, body, signal, adapter.route.headersTimeoutMs);
    },
    upstreamSendFailure,
    call.policy,
    call.signal,
    {
    onRetry: (attempt, failure, delayMs) =>
      call.log.warn({ attempt, failure_kind: ModelFailureKind[failure.kind], http_status: failure.httpStatus, delay_ms: delayMs }, "retrying a relayed request before the first byte"),
    },
  );
  switch (opened.kind) {
    case "cancelled":
      if (call.signal.reason === GATEWAY_SHUTDOWN) sendError(res, format, new InboundError("unavailable", "the gateway is stopping; try again"));
      else res.destroy();
      return { outcome: "CANCELLED", usage: undefined, firstByteMs: undefined };
    case "failed": {
      sendError(res, format, errorOfFailure(opened.failure));
      return { outcome: ModelFailureKind[opened.failure.kind] ?? "failed", usage: undefined, firstByteMs: undefined };
    }
    case "opened":
      break;
    default: {
      const never: never = opened;
      throw new Error(`unknown open outcome ${JSON.stringify(never)}`);
    }
  }
  const upstream = opened.response;
  const contentType = headerText(upstream.headers["content-type"]);
  if (!request.stream) {
    let answer: Buffer;
    try {
      answer = await wholeBody(upstream, call.signal);
    } catch (error) {
      if (call.signal.aborted) return { outcome: "CANCELLED", usage: undefined, firstByteMs: undefined };
      sendError(res, format, new InboundError("upstream", `the upstream answer broke: ${(error as Error).message}`));
      return { outcome: ModelFailureKind[ModelFailureKind.TRUNCATED], usage: undefined, firstByteMs: undefined };
    }
    res.writeHead(200, { "content-type": contentType ?? "application/json", "content-length": String(answer.length) });
    res.end(answer);
    return { outcome: "ok", usage: bodyUsage(adapter.route.kind, parseJson(answer.toString("utf8"))), firstByteMs: Date.now() - call.started };
  }
  return relayStream(call, upstream, contentType, request.dropUsageChunk);
}

/**
 * Each chunk is written to the client in the handler that delivers it,
 * before the next one is delivered; a client that cannot take more pauses the
 * upstream socket until it drains.
 */
function relayStream(call: InboundCall, upstream: UpstreamResponse, contentType: string | undefined, dropUsageChunk: boolean): Promise<CallResult> {
  const { res, format } = call;
  const watch = streamWatch(call.route.kind, { dropUsageChunk });
  const splitter = new SseSplitter();
  const decoder = new StringDecoder("utf8");
  // The head goes out with the first chunk, which usually came with the upstream's head; if none
  // is written in this event-loop turn, it goes alone.
  sseHead(res, contentType ?? "text/event-stream");
  let wrote = false;
  setImmediate(() => {
    if (!wrote && !res.destroyed && !res.writableEnded) res.flushHeaders();
  });
  const firstByteMs = Date.now() - call.started;
  const send = (out: string | Buffer): void => {
    wrote = true;
    const ok = res.write(out);
    if (!ok && !res.destroyed) {
      upstream.pause();
      res.once("drain", () => upstream.resume());
    }
  };
  /** Complete events the watch reads, and with dropUsageChunk the ones it keeps. */
  const watched = (text: string): string => {
    let kept = "";
    for (const event of splitter.push(text)) if (watch.see(event)) kept += event.raw;
    return kept;
  };
  const forward = (text: string, raw: Buffer | undefined): void => {
    // Whole events the watch has nothing to read in (most chunks) are passed on unsplit.
    const plain = splitter.completes(text) && !watch.mayMatter(text);
    if (dropUsageChunk) {
      // Event by event (complete events only), so the one left out never reaches the client.
      const out = plain ? text : watched(text);
      if (out !== "") send(out);
    } else {
      // The chunk goes out first; the watch reads it afterwards, off the path to the client.
      if (raw !== undefined) send(raw);
      if (!plain) watched(text);
    }
  };
  return new Promise((resolve) => {
    let finished = false;
    const finish = (failure: string | undefined, cancelled = false): void => {
      if (finished) return;
      finished = true;
      if (cancelled) {
        upstream.destroy();
        res.destroy();
        resolve({ outcome: "CANCELLED", usage: watch.usage, firstByteMs });
        return;
      }
      const rest = decoder.end();
      // Its bytes went out with their chunk already: only the watch and the drop filter read it.
      if (rest !== "") forward(rest, undefined);
      const tail = splitter.flush();
      if (tail !== undefined && watch.see(tail) && dropUsageChunk) res.write(tail.raw);
      const problem = failure ?? (watch.ended ? undefined : "the upstream stream ended without its terminal event");
      if (problem !== undefined) {
        call.log.warn({ reason: problem }, "relayed stream ended badly");
        res.write(inStreamError(format, new InboundError("upstream", problem)));
      }
      res.end();
      resolve({ outcome: problem === undefined ? "ok" : ModelFailureKind[ModelFailureKind.TRUNCATED], usage: watch.usage, firstByteMs });
    };
    call.signal.addEventListener("abort", () => finish(undefined, true), { once: true });
    // The decoder holds no part of a character (true after a chunk that ended with an ASCII byte).
    let decoderClean = true;
    upstream.read({
      data: (chunk) => {
        call.observer?.bodyChunk();
        if (decoderClean && splitter.completesBytes(chunk) && !watch.mayMatterBytes(chunk)) {
          // Whole events the watch has nothing to read in (most chunks): passed on as they came, never
          // decoded into a string (that string was the largest allocation of a relayed request).
          send(chunk);
        } else {
          forward(decoder.write(chunk), chunk);
          decoderClean = (chunk.at(-1) ?? 0) < 0x80;
        }
        call.observer?.contentSent();
      },
      end: () => finish(undefined),
      error: (error) => finish(`the upstream stream broke: ${error.message}`, call.signal.aborted),
    });
  });
}

/** A non-streamed answer's body, whole. */
function wholeBody(upstream: UpstreamResponse, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onAbort = (): void => {
      upstream.destroy();
      reject(new Error("cancelled"));
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    upstream.read({
      data: (chunk) => chunks.push(chunk),
      end: () => {
        signal.removeEventListener("abort", onAbort);
        resolve(Buffer.concat(chunks));
      },
      error: (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    });
  });
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function withoutGatewayThinking(messages: unknown[]): unknown[] {
  let changed = false;
  const out = messages.map((message) => {
    if (!isRecord(message) || message["role"] !== "assistant" || !Array.isArray(message["content"])) return message;
    const content = message["content"].filter((block) => !(isRecord(block) && block["type"] === "thinking" && block["signature"] === GATEWAY_THINKING_SIGNATURE));
    if (content.length === message["content"].length) return message;
    changed = true;
    return { ...message, content };
  });
  return changed ? out : messages;
}

function withoutGatewayReasoning(input: unknown[]): unknown[] {
  const out = input.filter((item) => !(isRecord(item) && item["type"] === "reasoning" && typeof item["id"] === "string" && item["id"].startsWith(GATEWAY_REASONING_ID_PREFIX)));
  return out.length === input.length ? input : out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

