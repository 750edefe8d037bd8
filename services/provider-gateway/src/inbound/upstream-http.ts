/**
 * The relay's HTTP client: one request with a client's own body to the
 * route's endpoint (passThroughTarget), on undici's keep-alive connection
 * pools, resolving once 2xx headers arrived with an answer whose body the
 * caller reads chunk by chunk. Nothing of the request or the answer is built
 * or parsed here, so the official SDKs (which the adapters use for every
 * model call they build) add nothing but per-request cost on this path:
 * AbortSignal.any per call, request building, WHATWG streams per chunk,
 * which measured as most of the relay's CPU. undici's dispatcher (the
 * Node.js project's HTTP client) is used directly, without streams: it
 * measured as less CPU per request than node:http's ClientRequest and
 * IncomingMessage for the same relay.
 *
 * The body is delivered through `read`: each chunk as the parser hands it
 * over, one at a time, so a caller that writes each chunk before returning
 * passes every upstream chunk on before the next one is read; `pause` stops
 * reading from the socket (backpressure) until `resume`.
 *
 * Errors are mapped once, into the provider-neutral SendFailure the retry
 * rules read (upstream-errors.ts): an HTTP error status with the endpoint's
 * message and code, a connection error, a header timeout, or an abort.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import type { PassThroughTarget } from "../adapters/adapter.ts";
import { upstreamPool } from "../upstream-pool.ts";
import { describeErrorBody, messageWithCause, retryAfterMs, type SendFailure } from "../upstream-errors.ts";


export interface UpstreamBodyHandlers {
  data(chunk: Buffer): void;
  end(): void;
  error(error: Error): void;
}

/** A 2xx answer: its headers, and the body once `read` is called (until then the body waits). */
export interface UpstreamResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Delivers the body: each chunk to `data` in order, then `end` or `error` once. Call once. */
  read(handlers: UpstreamBodyHandlers): void;
  /** Stop reading from the socket until resume() (the client cannot take more now). */
  pause(): void;
  resume(): void;
  /** Give up the body; nothing more is delivered. */
  destroy(): void;
}

/** A non-2xx answer: status, headers and the body text. */
class UpstreamHttpError extends Error {
  override readonly name = "UpstreamHttpError";
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  constructor(status: number, headers: IncomingHttpHeaders, body: string) {
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

/** A kept-alive connection the server had closed meanwhile: the request never got an answer on it, so it is sent again once. */
class StaleSocketError extends Error {
  override readonly name = "StaleSocketError";
}

/** POST `body` to the target; resolves once 2xx headers arrived. */
export async function sendUpstream(target: PassThroughTarget, body: string, signal: AbortSignal, headersTimeoutMs: number): Promise<UpstreamResponse> {
  try {
    return await sendOnce(target, body, signal, headersTimeoutMs);
  } catch (error) {
    if (!(error instanceof StaleSocketError)) throw error;
    return sendOnce(target, body, signal, headersTimeoutMs);
  }
}

function sendOnce(target: PassThroughTarget, body: string, signal: AbortSignal, headersTimeoutMs: number): Promise<UpstreamResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new UpstreamAbortError("aborted before sending"));
      return;
    }
    const { origin, path } = parsedUrl(target.url);
    const payload = Buffer.from(body);
    const handler = new RelayHandler(signal, resolve, reject);
    upstreamPool.dispatch(
      {
        origin,
        path,
        method: "POST",
        headers: { ...target.headers, "content-type": "application/json", "content-length": String(payload.length), accept: "application/json, text/event-stream" },
        body: payload,
        headersTimeout: headersTimeoutMs,
        // A stream may pause for as long as the model thinks: no timeout between chunks.
        bodyTimeout: 0,
      },
      handler,
    );
  });
}

type Phase = "waiting" | "error-body" | "body" | "done";

/** One request's handler: settles the promise at the head, then hands the body to the reader. */
class RelayHandler implements Dispatcher.DispatchHandler, UpstreamResponse {
  status = 0;
  headers: IncomingHttpHeaders = {};
  #phase: Phase = "waiting";
  #controller: Dispatcher.DispatchController | undefined;
  #reader: UpstreamBodyHandlers | undefined;
  /** What came before `read` (normally nothing: the body is paused until then). */
  #early: Buffer[] = [];
  #earlyEnd: { error: Error | undefined } | undefined;
  #errorBody: Buffer[] = [];
  #gotHead = false;
  #destroyed = false;
  readonly #signal: AbortSignal;
  readonly #resolve: (response: UpstreamResponse) => void;
  readonly #reject: (error: Error) => void;
  readonly #onAbort = (): void => {
    this.#controller?.abort(new UpstreamAbortError("aborted"));
  };

  constructor(signal: AbortSignal, resolve: (response: UpstreamResponse) => void, reject: (error: Error) => void) {
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    signal.addEventListener("abort", this.#onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#signal.aborted) controller.abort(new UpstreamAbortError("aborted"));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#gotHead = true;
    this.status = statusCode;
    this.headers = headers;
    if (statusCode >= 200 && statusCode < 300) {
      this.#phase = "body";
      // The body waits for its reader.
      controller.pause();
      this.#resolve(this);
      return;
    }
    this.#phase = "error-body";
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#phase === "error-body") {
      this.#errorBody.push(chunk);
      return;
    }
    if (this.#phase !== "body" || this.#destroyed) return;
    if (this.#reader === undefined) this.#early.push(chunk);
    else this.#reader.data(chunk);
  }

  onResponseEnd(): void {
    const phase = this.#phase;
    this.#phase = "done";
    this.#signal.removeEventListener("abort", this.#onAbort);
    if (phase === "error-body") {
      this.#reject(new UpstreamHttpError(this.status, this.headers, Buffer.concat(this.#errorBody).toString("utf8")));
      return;
    }
    if (phase !== "body" || this.#destroyed) return;
    if (this.#reader === undefined) this.#earlyEnd = { error: undefined };
    else this.#reader.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const phase = this.#phase;
    this.#phase = "done";
    this.#signal.removeEventListener("abort", this.#onAbort);
    if (phase === "waiting" || phase === "error-body") {
      this.#reject(this.#requestError(error));
      return;
    }
    if (phase !== "body" || this.#destroyed) return;
    if (this.#reader === undefined) this.#earlyEnd = { error };
    else this.#reader.error(error);
  }

  read(handlers: UpstreamBodyHandlers): void {
    this.#reader = handlers;
    for (const chunk of this.#early.splice(0)) {
      if (this.#destroyed) return;
      handlers.data(chunk);
    }
    const ended = this.#earlyEnd;
    if (ended !== undefined) {
      if (ended.error === undefined) handlers.end();
      else handlers.error(ended.error);
      return;
    }
    this.#controller?.resume();
  }

  pause(): void {
    this.#controller?.pause();
  }

  resume(): void {
    this.#controller?.resume();
  }

  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#signal.removeEventListener("abort", this.#onAbort);
    if (this.#phase !== "done") this.#controller?.abort(new UpstreamAbortError("the body is not wanted any more"));
  }

  #requestError(error: Error): Error {
    if (this.#signal.aborted || error instanceof UpstreamAbortError) return new UpstreamAbortError("aborted");
    const code = (error as { code?: unknown }).code;
    if (code === "UND_ERR_HEADERS_TIMEOUT") return new UpstreamConnectionError(error.message, true, { cause: error });
    // Closed by the server before any answer on a connection it had kept alive (the race with its idle timeout).
    if (!this.#gotHead && code === "UND_ERR_SOCKET" && isIdleClose(error)) return new StaleSocketError(error.message);
    return new UpstreamConnectionError(messageWithCause(error), false, { cause: error });
  }
}

/** undici's "other side closed" on a connection that had carried answers before (kept alive), before any byte of this one. */
function isIdleClose(error: Error): boolean {
  const socket = (error as { socket?: { bytesRead?: unknown } }).socket;
  return typeof socket === "object" && socket !== null && typeof socket.bytesRead === "number" && socket.bytesRead > 0;
}

/** Route URLs, split once each into origin and path (a handful per gateway: one per route and operation). */
const parsedUrls = new Map<string, { readonly origin: string; readonly path: string }>();

function parsedUrl(text: string): { readonly origin: string; readonly path: string } {
  let parsed = parsedUrls.get(text);
  if (parsed === undefined) {
    const url = new URL(text);
    parsed = { origin: url.origin, path: `${url.pathname}${url.search}` };
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
