/**
 * The relay's HTTP client: one request with a client's own body to the
 * route's endpoint (passThroughTarget), on keep-alive node:http(s) agents,
 * resolving with the streaming response once 2xx headers arrived. Nothing of
 * the request or the answer is built or parsed here, so the official SDKs
 * (which the adapters use for every model call they build) add nothing but
 * per-request cost on this path: AbortSignal.any per call, request building,
 * WHATWG streams per chunk, which measured as most of the relay's CPU.
 *
 * Errors are mapped once, into the provider-neutral SendFailure the retry
 * rules read (upstream-errors.ts): an HTTP error status with the endpoint's
 * message and code, a connection error, a header timeout, or an abort.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from "node:https";
import { urlToHttpOptions } from "node:url";
import type { PassThroughTarget } from "../adapters/adapter.ts";
import { describeErrorBody, retryAfterMs, type SendFailure } from "../upstream-errors.ts";

const AGENT_OPTIONS = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets: Infinity, maxFreeSockets: 256, scheduling: "lifo" as const };
const httpAgent = new HttpAgent(AGENT_OPTIONS);
const httpsAgent = new HttpsAgent(AGENT_OPTIONS);

/** A non-2xx answer: status, headers and the body text. */
class UpstreamHttpError extends Error {
  override readonly name = "UpstreamHttpError";
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
  constructor(status: number, headers: IncomingMessage["headers"], body: string) {
    super(`HTTP ${status}`);
    this.status = status;
    this.headers = headers;
    this.body = body;
  }
}

class UpstreamConnectionError extends Error {
  override readonly name = "UpstreamConnectionError";
  readonly timeout: boolean;
  constructor(message: string, timeout: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.timeout = timeout;
  }
}

class UpstreamAbortError extends Error {
  override readonly name = "UpstreamAbortError";
}

/** A kept-alive socket the server had closed meanwhile: the request never reached it, so it is sent again once. */
class StaleSocketError extends Error {
  override readonly name = "StaleSocketError";
}

/** POST `body` to the target; resolves with the response stream once 2xx headers arrived. */
export async function sendUpstream(target: PassThroughTarget, body: string, signal: AbortSignal, headersTimeoutMs: number): Promise<IncomingMessage> {
  try {
    return await sendOnce(target, body, signal, headersTimeoutMs);
  } catch (error) {
    if (!(error instanceof StaleSocketError)) throw error;
    return sendOnce(target, body, signal, headersTimeoutMs);
  }
}

function sendOnce(target: PassThroughTarget, body: string, signal: AbortSignal, headersTimeoutMs: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new UpstreamAbortError("aborted before sending"));
      return;
    }
    const { https, options } = parsedUrl(target.url);
    const payload = Buffer.from(body);
    const req = (https ? httpsRequest : httpRequest)({
      ...options,
      method: "POST",
      agent: https ? httpsAgent : httpAgent,
      headers: { ...target.headers, "content-type": "application/json", "content-length": String(payload.length), accept: "application/json, text/event-stream" },
    });
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      req.destroy();
      reject(new UpstreamConnectionError(`no response headers within ${headersTimeoutMs} ms`, true));
    }, headersTimeoutMs);
    const onAbort = (): void => {
      req.destroy();
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new UpstreamAbortError("aborted"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("response", (res) => {
      if (settled) {
        res.destroy();
        return;
      }
      settled = true;
      clearTimeout(timer);
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        // The caller reads the body; an abort from now on cuts it.
        res.once("close", () => signal.removeEventListener("abort", onAbort));
        resolve(res);
        return;
      }
      signal.removeEventListener("abort", onAbort);
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => reject(new UpstreamHttpError(status, res.headers, Buffer.concat(chunks).toString("utf8"))));
      res.on("error", (error) => reject(new UpstreamConnectionError(error.message, false, { cause: error })));
    });
    req.on("error", (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      const stale = req.reusedSocket && (error as NodeJS.ErrnoException).code === "ECONNRESET";
      reject(signal.aborted ? new UpstreamAbortError("aborted") : stale ? new StaleSocketError(error.message) : new UpstreamConnectionError(error.message, false, { cause: error }));
    });
    req.end(payload);
  });
}

interface ParsedTarget {
  readonly https: boolean;
  /** protocol, host, port, path (and auth) as node:http(s) takes them. */
  readonly options: RequestOptions;
}

/** Route URLs, parsed once each into request options (a handful per gateway: one per route and operation). */
const parsedUrls = new Map<string, ParsedTarget>();

function parsedUrl(text: string): ParsedTarget {
  let parsed = parsedUrls.get(text);
  if (parsed === undefined) {
    const url = new URL(text);
    parsed = { https: url.protocol === "https:", options: urlToHttpOptions(url) };
    if (parsedUrls.size < 1_000) parsedUrls.set(text, parsed);
  }
  return parsed;
}

/** The one mapping of relay errors into SendFailure. */
export function upstreamSendFailure(error: unknown): SendFailure {
  if (error instanceof UpstreamAbortError) return { kind: "aborted" };
  if (error instanceof UpstreamConnectionError) return { kind: "connection", message: error.message, timeout: error.timeout };
  if (error instanceof UpstreamHttpError) {
    let parsed: unknown = error.body;
    try {
      parsed = JSON.parse(error.body);
    } catch {
      // a text body: its text is the message
    }
    const { message, code } = describeErrorBody(parsed);
    const headers = new Headers();
    for (const [name, value] of Object.entries(error.headers)) if (typeof value === "string") headers.set(name, value);
    return { kind: "http", status: error.status, message: message ?? `HTTP ${error.status}`, providerCode: code, retryAfterMs: retryAfterMs(headers) };
  }
  return { kind: "connection", message: error instanceof Error ? error.message : String(error), timeout: false };
}
