/**
 * One model call, provider-neutral: prepare the endpoint request, open it
 * (retrying only before the first byte), then feed the SSE body through the
 * adapter's decoder into ModelEvents. Every way a call can end becomes exactly
 * one terminal event: done from the decoder, or a typed failure (rejected
 * request, HTTP error, cancelled, cut connection, protocol violation).
 *
 * Cancellation: `signal` aborts the HTTP request whether it is still waiting
 * for response headers, sleeping before a retry, or streaming the body.
 */
import type { ModelRequest } from "@byok/contracts";
import { ModelFailureKind } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { Clock } from "@byok/platform/clock";
import type { BoundAdapter } from "./adapters/adapter.ts";
import { ModelEventWriter, ProtocolViolation, type EmitModelEvent } from "./events.ts";
import type { UpstreamObserver } from "./metrics.ts";
import { DEFAULT_BACKOFF, openWithRetries, type RetryPolicy } from "./retry.ts";
import { readSseEvents } from "./sse.ts";

/** Abort reason for calls cut short because the gateway stops: a retryable UNAVAILABLE, not a cancel. */
export const GATEWAY_SHUTDOWN = "provider gateway shutting down";

export interface ModelCallOptions {
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly maxRetryAfterMs?: number;
  /** Backoff overrides (tests). */
  readonly backoff?: Partial<Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs">>;
  /** Times the waits before retries (default: the system clock). */
  readonly clock?: Clock;
  /** Told when the upstream request goes out and when body chunks arrive (metrics.ts). */
  readonly observer?: UpstreamObserver;
}

/** Why the upstream request of an ended call is aborted (nothing reads it: the call has its outcome). */
const CALL_ENDED = new Error("the model call ended");

export async function runModelCall(adapter: BoundAdapter, request: ModelRequest, emit: EmitModelEvent, options: ModelCallOptions): Promise<void> {
  const { route } = adapter;
  const writer = new ModelEventWriter(emit);
  const prepared = adapter.prepare(request);
  if (prepared.kind === "rejected") {
    writer.fail(prepared.rejection === "config" ? ModelFailureKind.CONFIG : ModelFailureKind.INVALID_REQUEST, prepared.message);
    return;
  }

  const upstream = new AbortController();
  const onCancel = (): void => upstream.abort(options.signal.reason);
  if (options.signal.aborted) onCancel();
  else options.signal.addEventListener("abort", onCancel, { once: true });
  const policy: RetryPolicy = {
    maxAttempts: route.maxAttempts,
    baseDelayMs: options.backoff?.baseDelayMs ?? DEFAULT_BACKOFF.baseDelayMs,
    maxDelayMs: options.backoff?.maxDelayMs ?? DEFAULT_BACKOFF.maxDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULT_BACKOFF.maxRetryAfterMs,
  };

  try {
    const observer = options.observer;
    const send = (signal: AbortSignal): Promise<Response> => {
      observer?.requestSent();
      return prepared.send(signal);
    };
    const opened = await openWithRetries(send, adapter.toSendFailure, policy, upstream.signal, {
      clock: options.clock,
      onRetry: (attempt, failure, delayMs) =>
        options.log.warn({ attempt, failure_kind: ModelFailureKind[failure.kind], http_status: failure.httpStatus, delay_ms: delayMs }, "retrying model request before the first byte"),
    });
    switch (opened.kind) {
      case "cancelled":
        failCancelled(writer, options.signal);
        return;
      case "failed": {
        const f = opened.failure;
        writer.fail(f.kind, `${f.message}${opened.attempts > 1 ? ` (after ${opened.attempts} attempts)` : ""}`, {
          retryable: f.retryable,
          httpStatus: f.httpStatus,
          providerCode: f.providerCode,
          retryAfterMs: f.retryAfterMs,
        });
        return;
      }
      case "opened":
        break;
      default: {
        const never: never = opened;
        throw new Error(`unknown open outcome ${JSON.stringify(never)}`);
      }
    }

    writer.start(route.kind, route.id, route.upstreamModel);
    const body = opened.response.body;
    if (body === null) {
      writer.fail(ModelFailureKind.TRUNCATED, "the endpoint answered without a body", { retryable: true });
      return;
    }
    const decoder = adapter.createDecoder(writer);
    // Errors of the decoder are told apart from errors of reading the body.
    const decode = <T>(step: () => T): T => {
      try {
        return step();
      } catch (error) {
        throw error instanceof ProtocolViolation ? error : new DecoderFault(error);
      }
    };
    try {
      for await (const event of readSseEvents(body, observer && (() => observer.bodyChunk()))) {
        if (decode(() => decoder.onEvent(event)) === "end" || writer.finished) break;
      }
      if (!writer.finished) {
        if (upstream.signal.aborted) failCancelled(writer, options.signal);
        else decode(() => decoder.onEnd());
      }
    } catch (error) {
      if (error instanceof ProtocolViolation) {
        writer.fail(ModelFailureKind.PROTOCOL, `the endpoint broke its stream protocol: ${error.message}`);
      } else if (error instanceof DecoderFault) {
        options.log.error({ err: error.cause }, "stream decoder failed");
        writer.fail(ModelFailureKind.PROTOCOL, `the gateway could not decode the stream: ${describe(error.cause)}`);
      } else if (upstream.signal.aborted) {
        failCancelled(writer, options.signal);
      } else {
        writer.fail(ModelFailureKind.TRUNCATED, `the connection broke while streaming: ${describe(error)}`, { retryable: true });
      }
    }
  } finally {
    options.signal.removeEventListener("abort", onCancel);
    // Stops the body download when the call ended before the endpoint did. With a reason made once:
    // abort() without one builds a DOMException (and its stack) for every call.
    upstream.abort(CALL_ENDED);
  }
}


function failCancelled(writer: ModelEventWriter, signal: AbortSignal): void {
  if (signal.reason === GATEWAY_SHUTDOWN) writer.fail(ModelFailureKind.UNAVAILABLE, "the provider gateway stopped during the call", { retryable: true });
  else writer.fail(ModelFailureKind.CANCELLED, "the model call was cancelled");
}

class DecoderFault extends Error {
  override readonly name = "DecoderFault";
  constructor(cause: unknown) {
    super("stream decoder failed", { cause });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
