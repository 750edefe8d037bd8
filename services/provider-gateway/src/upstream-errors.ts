/**
 * Errors of one HTTP attempt, before the stream starts, in a provider-neutral
 * shape. Adapters map their SDK's error classes into SendFailure once (at the
 * SDK boundary); this file decides the ModelFailure kind and whether the
 * attempt may be retried (429, 5xx, 408 and connection errors, never once a
 * byte of the stream arrived).
 */
import { ModelFailureKind } from "@byok/contracts";

export type SendFailure =
  | {
      readonly kind: "http";
      readonly status: number;
      readonly message: string;
      readonly providerCode: string | undefined;
      /** From Retry-After / retry-after-ms, when the endpoint sent one. */
      readonly retryAfterMs: number | undefined;
      /** The endpoint said the request does not fit the context window (context-overflow.ts). */
      readonly contextOverflow?: boolean;
    }
  | { readonly kind: "connection"; readonly message: string; readonly timeout: boolean }
  | { readonly kind: "aborted" };

export interface ClassifiedFailure {
  readonly kind: ModelFailureKind;
  readonly message: string;
  readonly retryable: boolean;
  readonly httpStatus: number;
  readonly providerCode: string;
  readonly retryAfterMs: number | undefined;
}

export function classifySendFailure(failure: Exclude<SendFailure, { kind: "aborted" }>): ClassifiedFailure {
  switch (failure.kind) {
    case "connection":
      return {
        kind: ModelFailureKind.UNAVAILABLE,
        message: failure.timeout ? `no response headers in time: ${failure.message}` : `cannot reach the endpoint: ${failure.message}`,
        retryable: true,
        httpStatus: 0,
        // "timeout" tells a slow endpoint (HTTP 504 on the HTTP front) from an unreachable one.
        providerCode: failure.timeout ? "timeout" : "",
        retryAfterMs: undefined,
      };
    case "http": {
      const { status } = failure;
      const base = { message: `HTTP ${status}: ${failure.message}`, httpStatus: status, providerCode: failure.providerCode ?? "", retryAfterMs: failure.retryAfterMs };
      if (failure.contextOverflow === true) return { ...base, kind: ModelFailureKind.CONTEXT_OVERFLOW, retryable: false };
      if (status === 429) return { ...base, kind: ModelFailureKind.RATE_LIMITED, retryable: true };
      if (status === 401 || status === 403) return { ...base, kind: ModelFailureKind.AUTH, retryable: false };
      if (status === 408 || status >= 500) return { ...base, kind: ModelFailureKind.PROVIDER_ERROR, retryable: true };
      return { ...base, kind: ModelFailureKind.PROVIDER_ERROR, retryable: false };
    }
    default: {
      const never: never = failure;
      throw new Error(`unknown send failure ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Retry-After as milliseconds: `retry-after-ms` (OpenAI), `retry-after` in
 * seconds or as an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The `message` and `code`/`type` of an endpoint error body (`{error:{...}}` or the error object itself). */
export function describeErrorBody(body: unknown): { message: string | undefined; code: string | undefined } {
  const record = asRecord(body);
  if (record === undefined) return { message: typeof body === "string" && body !== "" ? body : undefined, code: undefined };
  const inner = asRecord(record["error"]) ?? record;
  const message = typeof inner["message"] === "string" ? inner["message"] : undefined;
  const code = typeof inner["code"] === "string" ? inner["code"] : typeof inner["type"] === "string" ? inner["type"] : undefined;
  return { message, code };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A connection error's message with its causes' ("Connection error.: fetch failed: connect ECONNREFUSED ..."), each once. */
export function messageWithCause(error: Error): string {
  // The SDKs wrap fetch's "fetch failed", which wraps what really happened (a refused connect,
  // "other side closed", a TLS failure): every distinct message of the chain, a few levels deep.
  const parts = [error.message];
  let cause: unknown = error.cause;
  for (let depth = 0; depth < CAUSE_DEPTH && cause instanceof Error; depth++, cause = cause.cause) {
    if (!parts.includes(cause.message)) parts.push(cause.message);
  }
  return parts.join(": ");
}

/** Causes named in a connection failure's message, below the error itself. */
const CAUSE_DEPTH = 3;
