/**
 * The NATS side of model calls (ARCHITECTURE §3.1 "model calls"). A caller
 * subscribes to its own inbox and publishes a ModelRequest on
 * `names.providerInvoke` with reply = that inbox; one gateway of the queue
 * group "provider-gateway" takes it and publishes ModelEvent frames (protobuf,
 * seq from 1, no gaps) to the reply subject until exactly one done or
 * failure. While no frame has gone out for `keepaliveMs` (waiting for
 * headers, a retry, or a slow model) it sends a keepalive frame. Any message
 * on `names.providerCancel(call_id)` aborts the upstream request; the call
 * then ends with failure CANCELLED. So does a caller that stops answering the
 * caller probes sent to its inbox every `callerProbeMs` (caller-probe.ts): a
 * dead caller's call is not left running upstream. An unknown model id is
 * failure CONFIG.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { isProviderCallId, ModelEventSchema, ModelFailureKind, ModelRequestSchema, QUEUE_GROUPS, type BusNames, type ModelRequest } from "@byok/contracts";
import type { Logger, NatsConnection } from "@byok/platform";
import type { Msg, Subscription } from "@nats-io/transport-node";
import type { BoundAdapter } from "./adapters/adapter.ts";
import { probeCaller } from "./caller-probe.ts";
import type { ModelEventBody } from "./events.ts";
import type { ModelCallObserver, ProviderGatewayMetrics } from "./metrics.ts";
import { GATEWAY_SHUTDOWN, runModelCall, type ModelCallOptions } from "./model-call.ts";

export interface InvokeServerOptions {
  readonly nc: NatsConnection;
  readonly names: BusNames;
  /** Bound adapters by route id (model alias). */
  readonly adapters: ReadonlyMap<string, BoundAdapter>;
  readonly log: Logger;
  readonly keepaliveMs: number;
  /** Interval of caller liveness probes while a call runs. */
  readonly callerProbeMs: number;
  readonly maxRetryAfterMs: number;
  readonly backoff?: ModelCallOptions["backoff"];
  readonly metrics: ProviderGatewayMetrics;
}

export interface InvokeServer {
  /** Calls in progress. */
  inFlight(): number;
  /** Stop taking calls, end the running ones (retryable UNAVAILABLE) and wait for them. */
  stop(): Promise<void>;
}

export function serveModelCalls(options: InvokeServerOptions): InvokeServer {
  const { nc, names, log } = options;
  const running = new Map<Promise<void>, AbortController>();
  const subscription: Subscription = nc.subscribe(names.providerInvoke, {
    queue: QUEUE_GROUPS.providerGateway,
    callback: (err, msg) => {
      if (err) {
        log.error({ err }, "model call subscription error");
        return;
      }
      const controller = new AbortController();
      const call = handleCall(options, msg, controller).catch((error: unknown) => log.error({ err: error }, "model call handler failed"));
      running.set(call, controller);
      void call.finally(() => running.delete(call));
    },
  });

  return {
    inFlight: () => running.size,
    async stop() {
      subscription.unsubscribe();
      for (const controller of running.values()) controller.abort(GATEWAY_SHUTDOWN);
      await Promise.allSettled([...running.keys()]);
    },
  };
}

/** Model label of calls that name no configured route. */
const UNKNOWN_MODEL = "unknown";

async function handleCall(options: InvokeServerOptions, msg: Msg, controller: AbortController): Promise<void> {
  const receivedAt = performance.now();
  const { nc, names } = options;
  const reply = msg.reply;
  if (reply === undefined || reply === "") {
    options.log.warn("model request without a reply subject dropped");
    return;
  }

  let seq = 0n;
  let terminal: ModelEventBody | undefined;
  let usageSeen: ModelEventBody | undefined;
  let observer: ModelCallObserver | undefined;
  const keepalive = setTimeout(function beat() {
    send({ case: "keepalive", value: {} });
  }, options.keepaliveMs);
  const send = (event: ModelEventBody): void => {
    if (terminal !== undefined) return;
    seq += 1n;
    if (event.case === "done" || event.case === "failure") {
      terminal = event;
      clearTimeout(keepalive);
    } else {
      keepalive.refresh();
    }
    if (event.case === "usage") usageSeen = event;
    try {
      nc.publish(reply, toBinary(ModelEventSchema, create(ModelEventSchema, { seq, event })));
      observer?.published(event);
    } catch (error) {
      options.log.warn({ err: error }, "cannot publish a model event; abandoning the call");
      controller.abort();
    }
  };

  let request: ModelRequest;
  try {
    request = fromBinary(ModelRequestSchema, msg.data);
  } catch (error) {
    observer = options.metrics.modelCall(UNKNOWN_MODEL, receivedAt);
    send({ case: "failure", value: { kind: ModelFailureKind.INVALID_REQUEST, message: `undecodable ModelRequest: ${(error as Error).message}` } });
    return;
  }

  const modelId = request.spec?.modelId ?? "";
  const log = options.log.child({ call_id: request.callId, run_id: request.runId, conversation_id: request.conversationId, model_id: modelId });
  const adapter = options.adapters.get(modelId);
  if (adapter === undefined) {
    log.warn("model call for an unknown model id");
    observer = options.metrics.modelCall(UNKNOWN_MODEL, receivedAt);
    send({ case: "failure", value: { kind: ModelFailureKind.CONFIG, message: `unknown model id ${JSON.stringify(modelId)}: not a BYOK model of this gateway` } });
    return;
  }

  observer = options.metrics.modelCall(adapter.route.id, receivedAt);
  // A call id that is not `<run_id>:<n>` (ids.ts) gets no cancel subject: such a caller cannot cancel.
  const callId = isProviderCallId(request.callId) ? request.callId : undefined;
  if (callId === undefined && request.callId !== "") log.warn("model call id is not <run_id>:<n>; the call cannot be cancelled");
  const cancel = callId === undefined ? undefined : nc.subscribe(names.providerCancel(callId), { max: 1, callback: () => controller.abort("cancelled by the caller") });
  const callerProbe = probeCaller(nc, reply, options.callerProbeMs, () => controller.abort("the caller is gone"), log);
  const started = Date.now();
  log.info({ route: adapter.route.id, provider: adapter.route.providerId, kind: adapter.route.kind, messages: request.messages.length }, "model call started");
  try {
    await runModelCall(adapter, request, send, {
      signal: controller.signal,
      log,
      maxRetryAfterMs: options.maxRetryAfterMs,
      observer,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    });
  } finally {
    cancel?.unsubscribe();
    callerProbe.stop();
    clearTimeout(keepalive);
    if (terminal === undefined) {
      // runModelCall always ends with a terminal; this only guards against a bug there.
      send({ case: "failure", value: { kind: ModelFailureKind.PROTOCOL, message: "the gateway ended the call without a terminal event" } });
    }
  }
  logCallEnd(log, terminal as ModelEventBody | undefined, usageSeen, seq, Date.now() - started);
}

function logCallEnd(log: Logger, terminal: ModelEventBody | undefined, usage: ModelEventBody | undefined, frames: bigint, durationMs: number): void {
  const tokens = usage?.case === "usage" ? { input_tokens: usage.value.inputTokens?.toString(), output_tokens: usage.value.outputTokens?.toString() } : {};
  if (terminal?.case === "done") {
    log.info({ outcome: "done", duration_ms: durationMs, frames: Number(frames), ...tokens }, "model call ended");
    return;
  }
  const failure = terminal?.case === "failure" ? terminal.value : undefined;
  log.info(
    {
      outcome: "failed",
      failure_kind: ModelFailureKind[failure?.kind ?? ModelFailureKind.UNSPECIFIED],
      http_status: failure?.httpStatus,
      provider_code: failure?.providerCode,
      duration_ms: durationMs,
      frames: Number(frames),
      ...tokens,
    },
    "model call ended",
  );
}
