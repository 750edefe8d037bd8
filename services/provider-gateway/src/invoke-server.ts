/**
 * The NATS side of model calls (ARCHITECTURE §3.1 "model calls"). A caller
 * subscribes to its own inbox and publishes a ModelRequest on
 * `names.providerInvoke` with reply = that inbox; one gateway of the queue
 * group "provider-gateway" takes it and publishes ModelEvents (protobuf, seq
 * from 1, no gaps) to the reply subject until exactly one done or failure.
 * The events made in one event-loop turn travel in one message
 * (event-frames.ts of @byok/contracts): the message goes out at the end
 * of the turn (setImmediate), a terminal at once, so nothing waits longer than
 * the turn that made it. While no frame has gone out for `keepaliveMs` (waiting for
 * headers, a retry, or a slow model) it sends a keepalive frame. Any message
 * on `names.providerCancel(call_id)` aborts the upstream request; the call
 * then ends with failure CANCELLED (one subscription per process receives every
 * cancel, call-cancels.ts). So does a caller that stops answering the
 * caller probes sent to its inbox every `callerProbeMs` (caller-probe.ts): a
 * dead caller's call is not left running upstream. An unknown model id is
 * failure CONFIG.
 *
 * Before the upstream request the call is admitted by the gateway's call
 * accounting (accounting/call-accounting.ts, client kind "cursor": every run
 * comes from the Cursor adapter today); a call over a limit ends with failure
 * OVER_LIMIT (provider_code = the limit, retry_after_ms), a model the member
 * may not use with failure CONFIG ("model_not_allowed"). Every admitted call
 * is settled with the usage the stream reported.
 *
 * A request may carry only what follows the history of the conversation's
 * last request (history_base): the gateway puts the whole history together
 * from what it holds (held-histories.ts), or ends the call at once with
 * HISTORY_BASE_UNKNOWN, and the caller sends it again whole.
 *
 * A request too large for one NATS message arrives as a reference to the
 * payload bucket (bus-payloads.ts of @byok/platform) and is read from there; a
 * bucket that cannot answer, or a payload that expired, ends the call with a
 * retryable UNAVAILABLE before any upstream request.
 *
 * Text and thinking deltas of one block that come within `deltaCoalesceMs` of
 * the last one sent travel as one ModelEvent (DeltaCoalescer of
 * @byok/model-stream): the first delta of a block goes out at once, any other
 * event sends what is pending first, so order and content are unchanged. All
 * calls share one window, and the frames of all calls made in one pass of the
 * event loop are published from one callback (end-of-pass.ts): many paced
 * streams reach the bus as one write per window, not one per delta.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { encodeModelEventPart, frameMessagesWithin, isProviderCallId, runClientKindName, ModelFailureKind, ModelRequestSchema, QUEUE_GROUPS, type BusNames, type ModelRequest } from "@byok/contracts";
import { blockDeltaRule, DeltaCoalescer, DeltaWindow } from "@byok/model-stream";
import { BusPayloads, PayloadFailure, ToolSetFailure, type Logger, type NatsConnection, type ToolSets } from "@byok/platform";
import { systemClock, type Clock } from "@byok/platform/clock";
import type { Msg, Subscription } from "@nats-io/transport-node";
import { callUsageOf, runCallReference, type AccountingTicket, type CallAccounting } from "./accounting/call-accounting.ts";
import { estimateRequestTokens, type MessagesEstimate } from "./accounting/estimate-tokens.ts";
import { CallCancels } from "./call-cancels.ts";
import { EndOfPass } from "./end-of-pass.ts";
import { HeldHistories } from "./held-histories.ts";
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
  /** Window (ms) for joining text/thinking deltas of one block into one ModelEvent (default 0: every delta alone). */
  readonly deltaCoalesceMs?: number;
  /** Timers of the delta window (default the system clock). */
  readonly clock?: Clock;
  readonly backoff?: ModelCallOptions["backoff"];
  readonly accounting: CallAccounting;
  /** A request's tool set named by digest, from this process's cache or the TOOL_SETS stream. */
  readonly toolSets: ToolSets;
  /** The Prometheus series (metrics.ts); also the CallMetrics of this path. */
  readonly metrics: ProviderGatewayMetrics;
  /** Where requests too large for one NATS message are read from (default: the deployment's payload bucket). */
  readonly payloads?: BusPayloads;
}

export interface InvokeServer {
  /** Calls in progress. */
  inFlight(): number;
  /** Stop taking calls, end the running ones (retryable UNAVAILABLE) and wait for them. */
  stop(): Promise<void>;
}

/** What the calls of one invoke server share: one delta window, one end-of-pass flush of their frames, one cancel subscription. */
interface SharedByCalls {
  readonly payloads: BusPayloads;
  readonly histories: HeldHistories;
  readonly window: DeltaWindow;
  readonly endOfPass: EndOfPass;
  readonly cancels: CallCancels;
}

export function serveModelCalls(options: InvokeServerOptions): InvokeServer {
  const { nc, names, log } = options;
  const running = new Map<Promise<void>, AbortController>();
  const shared: SharedByCalls = {
    payloads: options.payloads ?? BusPayloads.of(nc, names),
    histories: new HeldHistories(),
    window: new DeltaWindow(options.clock ?? systemClock, options.deltaCoalesceMs ?? 0),
    endOfPass: new EndOfPass(),
    cancels: new CallCancels(nc, names, log),
  };
  const subscription: Subscription = nc.subscribe(names.providerInvoke, {
    queue: QUEUE_GROUPS.providerGateway,
    callback: (err, msg) => {
      if (err) {
        log.error({ err }, "model call subscription error");
        return;
      }
      const controller = new AbortController();
      const call = handleCall(options, shared, msg, controller).catch((error: unknown) => log.error({ err: error }, "model call handler failed"));
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
      shared.cancels.close();
    },
  };
}

async function handleCall(options: InvokeServerOptions, shared: SharedByCalls, msg: Msg, controller: AbortController): Promise<void> {
  const receivedAt = performance.now();
  const { nc } = options;
  const reply = msg.reply;
  if (reply === undefined || reply === "") {
    options.log.warn("model request without a reply subject dropped");
    return;
  }

  let seq = 0n;
  let terminal: ModelEventBody | undefined;
  let usageSeen: ModelEventBody | undefined;
  /** Timings of the call (metrics.ts), from the moment its route is known. */
  let observer: ModelCallObserver | undefined = undefined;
  const keepalive = setTimeout(function beat() {
    coalescer.push({ case: "keepalive", value: {} });
  }, options.keepaliveMs);
  /** Events of this event-loop turn not sent yet (encoded), and the events themselves for the metrics. */
  let pendingParts: Uint8Array[] = [];
  let pendingEvents: ModelEventBody[] = [];
  let flushQueued = false;
  const flushFrame = (): void => {
    if (flushQueued) shared.endOfPass.cancel(flushFrame);
    flushQueued = false;
    if (pendingParts.length === 0) return;
    const parts = pendingParts;
    const events = pendingEvents;
    pendingParts = [];
    pendingEvents = [];
    try {
      // One message, unless the pass made more than one may carry (a very long tool call's last arguments and its end).
      for (const frame of frameMessagesWithin(parts, shared.payloads.inlineLimit)) nc.publish(reply, frame);
      for (const event of events) observer?.published(event);
    } catch (error) {
      options.log.warn({ err: error }, "cannot publish a model event; abandoning the call");
      controller.abort();
    }
  };
  const publish = (event: ModelEventBody): void => {
    if (terminal !== undefined) return;
    seq += 1n;
    const isTerminal = event.case === "done" || event.case === "failure";
    if (isTerminal) {
      terminal = event;
      clearTimeout(keepalive);
    } else {
      keepalive.refresh();
    }
    if (event.case === "usage") usageSeen = event;
    pendingParts.push(encodeModelEventPart({ seq, event }));
    pendingEvents.push(event);
    if (isTerminal) flushFrame();
    else if (!flushQueued) {
      flushQueued = true;
      shared.endOfPass.queue(flushFrame);
    }
  };
  const coalescer = new DeltaCoalescer<ModelEventBody>(publish, blockDeltaRule<ModelEventBody>(), shared.window);
  const send = (event: ModelEventBody): void => coalescer.push(event);

  // An inline request is taken without an await: the call must be registered (for its cancel, which may
  // follow in the same socket read) before anything else on this connection is handled.
  let data = msg.data;
  if (BusPayloads.isReference(msg)) {
    try {
      data = await shared.payloads.incoming(msg);
    } catch (error) {
      if (!(error instanceof PayloadFailure)) throw error;
      options.log.warn({ err: error }, "model request payload cannot be read");
      send({ case: "failure", value: { kind: ModelFailureKind.UNAVAILABLE, message: error.message, retryable: true } });
      return;
    }
  }
  let request: ModelRequest;
  try {
    request = fromBinary(ModelRequestSchema, data);
  } catch (error) {
    send({ case: "failure", value: { kind: ModelFailureKind.INVALID_REQUEST, message: `undecodable ModelRequest: ${(error as Error).message}` } });
    return;
  }
  const history = shared.histories.resolve(request);
  if (history.kind === "base_unknown") {
    send({ case: "failure", value: { kind: ModelFailureKind.HISTORY_BASE_UNKNOWN, message: history.message, retryable: true } });
    return;
  }
  request.messages = history.messages;
  request.historyBase = undefined;
  if (request.prompt !== undefined && request.prompt.toolsDigest.length > 0 && request.prompt.tools.length === 0) {
    try {
      request.prompt = await options.toolSets.resolve(request.prompt);
    } catch (error) {
      if (!(error instanceof ToolSetFailure)) throw error;
      options.log.warn({ err: error, call_id: request.callId, run_id: request.runId }, "model request names a tool set that cannot be read");
      const unreachable = error.kind === "unreachable";
      send({ case: "failure", value: { kind: unreachable ? ModelFailureKind.UNAVAILABLE : ModelFailureKind.INVALID_REQUEST, message: error.message, retryable: unreachable } });
      return;
    }
  }

  const modelId = request.spec?.modelId ?? "";
  const log = options.log.child({ call_id: request.callId, run_id: request.runId, conversation_id: request.conversationId, model_id: modelId });
  const adapter = options.adapters.get(modelId);
  if (adapter === undefined) {
    log.warn("model call for an unknown model id");
    send({ case: "failure", value: { kind: ModelFailureKind.CONFIG, message: `unknown model id ${JSON.stringify(modelId)}: not a BYOK model of this gateway` } });
    return;
  }

  observer = options.metrics.modelCall(adapter.route.id, receivedAt);
  // A call id that is not `<run_id>:<n>` (ids.ts) gets no cancel subject: such a caller cannot cancel.
  const callId = isProviderCallId(request.callId) ? request.callId : undefined;
  if (callId === undefined && request.callId !== "") log.warn("model call id is not <run_id>:<n>; the call cannot be cancelled");
  const unregisterCancel = callId === undefined ? undefined : shared.cancels.register(callId, () => controller.abort("cancelled by the caller"));
  const callerProbe = probeCaller(nc, reply, options.callerProbeMs, () => controller.abort("the caller is gone"), log);
  const started = Date.now();
  const { route } = adapter;
  const clientKind = runClientKindName(request.clientKind);
  const metric = { clientKind, routeId: route.id, path: "nats" as const };
  let firstFrameMs: number | undefined;
  let ticket: AccountingTicket | undefined;
  options.metrics.callStarted(metric);
  try {
    const admitted = await admit(options.accounting, request, history.estimate, adapter, send, log, options.metrics);
    if (admitted === undefined) return;
    ticket = admitted;
    log.info({ route: route.id, provider: route.providerId, kind: route.kind, messages: request.messages.length }, "model call started");
    await runModelCall(
      adapter,
      request,
      (event) => {
        firstFrameMs ??= Date.now() - started;
        send(event);
      },
      {
        signal: controller.signal,
        log,
        maxRetryAfterMs: options.maxRetryAfterMs,
        observer,
        ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      },
    );
  } finally {
    coalescer.flush();
    unregisterCancel?.();
    callerProbe.stop();
    clearTimeout(keepalive);
    if (terminal === undefined) {
      // runModelCall always ends with a terminal; this only guards against a bug there.
      send({ case: "failure", value: { kind: ModelFailureKind.PROTOCOL, message: "the gateway ended the call without a terminal event" } });
    }
    const usage = usageSeen?.case === "usage" ? callUsageOf(usageSeen.value) : undefined;
    const end = terminal as ModelEventBody | undefined;
    const outcome = end?.case === "failure" ? (ModelFailureKind[end.value.kind ?? ModelFailureKind.UNSPECIFIED] ?? "failed") : "ok";
    if (ticket !== undefined) options.accounting.settle(ticket, usage, outcome).catch((error: unknown) => log.error({ err: error }, "call accounting failed to settle the call"));
    options.metrics.callEnded({ ...metric, outcome, durationMs: Date.now() - started, firstByteMs: firstFrameMs, usage });
  }
  logCallEnd(log, terminal as ModelEventBody | undefined, usageSeen, seq, Date.now() - started);
}

/** Admission by the call accounting; on refusal the call's failure is sent and undefined returned. */
async function admit(
  accounting: CallAccounting,
  request: ModelRequest,
  /** estimateMessages(request.messages), kept with the conversation's held history. */
  messages: MessagesEstimate,
  adapter: BoundAdapter,
  send: (event: ModelEventBody) => void,
  log: Logger,
  metrics: ProviderGatewayMetrics,
): Promise<AccountingTicket | undefined> {
  const { route } = adapter;
  let decision;
  try {
    decision = await accounting.admit({
      memberId: request.memberId,
      clientKind: runClientKindName(request.clientKind),
      routeId: route.id,
      providerId: route.providerId,
      upstreamModel: route.upstreamModel,
      call: runCallReference(request.runId, request.callId),
      inputTokenEstimate: estimateRequestTokens(request, messages),
      maxOutputTokens: request.spec?.maxOutputTokens ?? route.maxOutputTokens,
    });
  } catch (error) {
    log.error({ err: error }, "call accounting failed to admit the call");
    send({ case: "failure", value: { kind: ModelFailureKind.UNAVAILABLE, message: "the gateway's call accounting is unavailable", retryable: true } });
    return undefined;
  }
  switch (decision.kind) {
    case "admitted":
      return decision.ticket;
    case "rejected":
      log.info({ limit: decision.limit, retry_after_ms: decision.retryAfterMs }, "model call over a limit");
      metrics.recordLimitRejection(decision.limit);
      send({
        case: "failure",
        value: { kind: ModelFailureKind.OVER_LIMIT, message: decision.message, providerCode: decision.limit, retryAfterMs: decision.retryAfterMs ?? 0 },
      });
      return undefined;
    case "forbidden":
      log.info("model call for a model the member may not use");
      send({ case: "failure", value: { kind: ModelFailureKind.CONFIG, message: decision.message, providerCode: "model_not_allowed" } });
      return undefined;
    default: {
      const never: never = decision;
      throw new Error(`unknown admission ${JSON.stringify(never)}`);
    }
  }
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
