/**
 * The `fetch` the official SDK clients send their requests with: undici's
 * dispatcher API (keep-alive pools) under a WHATWG Response, instead of the
 * runtime's global fetch.
 *
 * Why: the global fetch builds a full WHATWG Request per call (URL, Headers,
 * body extraction, an abort controller tied to the caller's signal) and
 * registers the request's controller and the response in
 * FinalizationRegistries, which V8's minor GC treats as strong: each call was
 * promoted to the old generation whole. With the SDK and a 50-chunk stream
 * from a loopback server, the client's CPU per streamed call went from 1.11 to
 * 0.73 ms; in the Cursor-path bench the gateway's minor GCs promoted about a
 * third less (docs/performance.md, "The SDKs' fetch").
 *
 * What it keeps of fetch's contract, as far as the SDKs rely on it:
 * - the status, the headers (repeated ones joined as fetch joins them) and the
 *   body as a ReadableStream of bytes, read with backpressure (the socket is
 *   paused while the stream's queue is full);
 * - `init.signal` aborts the request before the head and errors the body after
 *   it; the rejection is then an `AbortError`, which the SDKs map to their
 *   user-abort or timeout errors exactly as with fetch;
 * - any other failure rejects with `TypeError("fetch failed")` whose cause is
 *   undici's error, as the global fetch does.
 * Not followed: redirects (model APIs answer POSTs directly; a 3xx reaches the
 * SDK as an error status). Bodies other than strings and bytes (streams, form
 * data) go to the global fetch unchanged: no adapter sends one today.
 *
 * No undici timeouts: the SDK's `timeout` covers the wait for the head, and a
 * stream may pause for as long as the model thinks.
 */
import type { Dispatcher } from "undici";
import { upstreamPool } from "../upstream-pool.ts";

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Final statuses whose Response must have a null body (undici never hands over a 1xx as the answer). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** The fetch every SDK client of this process uses (on the shared upstream pool). */
export const sdkFetch: FetchLike = async (input, init) => {
  const body = init?.body;
  if (input instanceof Request || !(body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array)) {
    return globalThis.fetch(input, init);
  }
  const signal = init?.signal ?? undefined;
  if (aborted(signal)) throw abortError();
  const url = typeof input === "string" ? new URL(input) : input;
  let answer: Dispatcher.ResponseData;
  try {
    answer = await upstreamPool.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: (init?.method ?? "GET") as Dispatcher.HttpMethod,
      headers: plainHeaders(init?.headers),
      body: body ?? null,
      ...(signal === undefined ? {} : { signal }),
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  } catch (error) {
    if (aborted(signal)) throw abortError();
    throw new TypeError("fetch failed", { cause: error });
  }
  const headers = responseHeaders(answer.headers);
  if (NULL_BODY_STATUSES.has(answer.statusCode)) {
    answer.body.resume();
    return new Response(null, { status: answer.statusCode, headers });
  }
  return new Response(byteStream(answer.body, signal), { status: answer.statusCode, headers });
};

/** The answer's body as a byte stream: chunks as they arrive, the socket paused while the queue is full. */
function byteStream(source: Dispatcher.ResponseData["body"], signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      source.on("data", (chunk: Buffer) => {
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 0) <= 0) source.pause();
      });
      source.on("end", () => controller.close());
      source.on("error", (error: Error) => controller.error(aborted(signal) ? abortError() : new TypeError("terminated", { cause: error })));
    },
    pull() {
      source.resume();
    },
    cancel() {
      source.destroy();
    },
  });
}

/** The request's headers as undici takes them; the SDKs pass a Headers object, read as it is rather than copied. */
function plainHeaders(init: RequestInit["headers"]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (init === undefined) return headers;
  for (const [name, value] of init instanceof Headers ? init : new Headers(init)) headers[name] = value;
  return headers;
}

function responseHeaders(raw: Dispatcher.ResponseData["headers"]): Headers {
  const headers = new Headers();
  for (const name in raw) {
    const value = raw[name];
    if (typeof value === "string") headers.append(name, value);
    else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
  }
  return headers;
}

/** Read through a call, so a check after an await is not narrowed by one before it. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function abortError(): DOMException {
  return new DOMException("This operation was aborted", "AbortError");
}
