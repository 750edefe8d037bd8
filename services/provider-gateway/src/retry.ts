/**
 * Retries of the HTTP request before the first streamed byte: only failures
 * that happen before the response headers (429, 5xx, 408, connection errors,
 * header timeouts) are retried, at most `maxAttempts` attempts in total, with
 * exponential backoff or the endpoint's Retry-After. Once a 2xx response is
 * open nothing is retried here: the stream may already have reached the
 * caller. The SDKs' own retries are off (maxRetries: 0) so this rule holds.
 */
import { sleep, systemClock, type Clock } from "@byok/platform/clock";
import { classifySendFailure, type ClassifiedFailure, type SendFailure } from "./upstream-errors.ts";

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the attempt fails as is. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF = { baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 } as const;

export type OpenOutcome<R = Response> =
  | { readonly kind: "opened"; readonly response: R; readonly attempts: number }
  | { readonly kind: "failed"; readonly failure: ClassifiedFailure; readonly attempts: number }
  | { readonly kind: "cancelled"; readonly attempts: number };

export interface RetryOptions {
  onRetry?(attempt: number, failure: ClassifiedFailure, delayMs: number): void;
  /** Times the waits between attempts (default: the system clock; tests pass a manual one). */
  clock?: Clock;
}

/**
 * Run `send` until it returns a response, fails for good, or `signal` aborts.
 * `send` throws SDK errors; `toSendFailure` maps them (the adapter's SDK boundary).
 */
export async function openWithRetries<R = Response>(
  send: (signal: AbortSignal) => Promise<R>,
  toSendFailure: (error: unknown) => SendFailure,
  policy: RetryPolicy,
  signal: AbortSignal,
  options: RetryOptions = {},
): Promise<OpenOutcome<R>> {
  const clock = options.clock ?? systemClock;
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) return { kind: "cancelled", attempts: attempt - 1 };
    let failure: SendFailure;
    try {
      return { kind: "opened", response: await send(signal), attempts: attempt };
    } catch (error) {
      failure = signal.aborted ? { kind: "aborted" } : toSendFailure(error);
    }
    if (failure.kind === "aborted") return { kind: "cancelled", attempts: attempt };
    const classified = classifySendFailure(failure);
    const waitMs = classified.retryAfterMs ?? backoffDelayMs(attempt, policy);
    if (!classified.retryable || attempt >= policy.maxAttempts || waitMs > policy.maxRetryAfterMs) {
      return { kind: "failed", failure: classified, attempts: attempt };
    }
    options.onRetry?.(attempt, classified, waitMs);
    if (!(await sleep(clock, waitMs, signal))) return { kind: "cancelled", attempts: attempt };
  }
}

/** Backoff before retry number `attempt` (1 = after the first failure): exponential, capped, with jitter. */
export function backoffDelayMs(attempt: number, policy: Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exponential * (0.75 + Math.random() * 0.25));
}
