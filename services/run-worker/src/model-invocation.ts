/**
 * One model call over the bus (design/ARCHITECTURE.md §3.1, "model calls"):
 * subscribe to a private inbox, publish the ModelRequest to
 * `names.providerInvoke` with reply = inbox, then feed the streamed ModelEvents
 * (one or more per message, event-frames.ts of @byok/contracts; in seq
 * order, from 1) through a ModelCycle until it ends.
 *
 * Transport rules: the first frame and every next frame must arrive within the
 * idle timeout (the gateway sends keepalives every 5 s); a gap in seq, no
 * gateway listening or silence are `unavailable` provider failures. Cancelling
 * publishes to `names.providerCancel(call_id)` so the gateway aborts upstream.
 * The gateway's caller probes (header CALLER_PROBE_HEADER) are answered while
 * the call is open; once it ended the inbox is gone and the gateway stops.
 * A request too large for one NATS message (a long history) goes through the
 * payload bucket (bus-payloads.ts of @byok/platform); a bucket that cannot
 * take it fails the call as a retryable `unavailable`.
 *
 * History by reference: a call that names the stored history its messages are
 * (RequestHistory) sends only what follows the history this worker last sent
 * for the conversation, when that one is a prefix of it (sent-histories.ts);
 * the gateway holds the rest. A gateway that does not hold it answers
 * HISTORY_BASE_UNKNOWN as its only event, and the call goes out again whole
 * on a new inbox; nothing of the first attempt reaches the run.
 */
import { toBinary } from "@bufbuild/protobuf";
import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import {
  CALLER_PROBE_HEADER,
  decodeModelEventFrame,
  ModelFailureKind,
  ModelRequestSchema,
  parseProviderCallId,
  type BusNames,
  type ModelEvent,
  type ModelRequest,
} from "@byok/contracts";
import { BusPayloads, type Logger } from "@byok/platform";
import { systemClock, type Clock, type Timer } from "@byok/platform/clock";
import { ModelCycle, type CycleOutcome, type ForwardedEvent } from "./model-cycle.ts";
import { requestOnWire } from "./model-request.ts";
import { SentHistories, type RequestHistory } from "./sent-histories.ts";

export type InvocationOutcome = CycleOutcome | { readonly kind: "cancelled" };

export interface ModelInvoker {
  /** `history`: the stored history `request.messages` are, when they are one (then only what is new may travel). */
  invoke(request: ModelRequest, forward: (event: ForwardedEvent) => void, signal: AbortSignal, history?: RequestHistory): Promise<InvocationOutcome>;
}

/** The gateway did not hold the history the request named as its base. */
type BusAttempt = InvocationOutcome | { readonly kind: "base_unknown" };

export interface BusModelInvokerOptions {
  readonly nc: NatsConnection;
  readonly names: BusNames;
  /** Silence after which the call fails as unavailable (also the first-frame deadline). */
  readonly idleTimeoutMs: number;
  readonly log: Logger;
  /** Times the idle timeout (default: the system clock; tests pass a manual one). */
  readonly clock?: Clock;
  /** Where requests too large for one NATS message go (default: the deployment's payload bucket). */
  readonly payloads?: BusPayloads;
}

export function busModelInvoker(options: BusModelInvokerOptions): ModelInvoker {
  const withPayloads = { ...options, payloads: options.payloads ?? BusPayloads.of(options.nc, options.names) };
  const sent = new SentHistories();
  return {
    async invoke(request, forward, signal, history) {
      if (history === undefined) return settled(await invokeOverBus(withPayloads, request, forward, signal));
      const conversationId = request.conversationId;
      const base = sent.baseFor(conversationId, history);
      let attempt = await invokeOverBus(withPayloads, requestOnWire(request, base, history.revisionId), forward, signal);
      if (attempt.kind === "base_unknown") {
        options.log.debug({ call_id: request.callId, base_revision_id: base?.revisionId }, "the gateway does not hold the history base; sending the whole history");
        sent.forget(conversationId);
        attempt = await invokeOverBus(withPayloads, requestOnWire(request, undefined, history.revisionId), forward, signal);
      }
      sent.sent(conversationId, history);
      return settled(attempt);
    },
  };
}

/** Only a request that names a base ends base_unknown (invokeOverBus reads the refusal only then). */
function settled(attempt: BusAttempt): InvocationOutcome {
  if (attempt.kind === "base_unknown") throw new Error("a model request without a history base ended as base_unknown");
  return attempt;
}

function invokeOverBus(
  options: BusModelInvokerOptions & { readonly payloads: BusPayloads },
  request: ModelRequest,
  forward: (event: ForwardedEvent) => void,
  signal: AbortSignal,
): Promise<BusAttempt> {
  const { nc, names, idleTimeoutMs } = options;
  const clock = options.clock ?? systemClock;
  // The call's id on its few warnings, without a child logger per call (a pino child serializes its bindings when made).
  const warn = (fields: Record<string, unknown>, message: string): void => options.log.warn({ call_id: request.callId, ...fields }, message);
  const cycle = new ModelCycle();
  if (signal.aborted) return Promise.resolve({ kind: "cancelled" });
  return new Promise<BusAttempt>((resolve) => {
    let expectedSeq = 1n;
    let settled = false;
    let idleTimer: Timer | undefined;

    const finish = (outcome: BusAttempt): void => {
      if (settled) return;
      settled = true;
      idleTimer?.cancel();
      signal.removeEventListener("abort", onAbort);
      sub.unsubscribe();
      resolve(outcome);
    };
    const fail = (kind: ModelFailureKind, message: string, retryable: boolean): void => {
      warn({ failure_kind: ModelFailureKind[kind] }, message);
      finish(cycle.abandon("provider", kind, message, retryable));
    };
    /** (Re)starts the silence deadline; called for every frame, so the one timer is refreshed rather than replaced. */
    const armIdleTimer = (): void => {
      if (idleTimer === undefined) idleTimer = clock.setTimeout(() => fail(ModelFailureKind.UNAVAILABLE, `provider gateway silent for ${idleTimeoutMs} ms`, true), idleTimeoutMs);
      else idleTimer.refresh();
    };
    const onAbort = (): void => {
      if (settled) return;
      try {
        nc.publish(names.providerCancel(parseProviderCallId(request.callId)));
      } catch (err) {
        warn({ err }, "could not publish model call cancel");
      }
      finish({ kind: "cancelled" });
    };
    const onMessage = (msg: Msg): void => {
      if (settled) return;
      if (msg.headers?.has(CALLER_PROBE_HEADER) === true) {
        // The gateway checks that this caller still listens: not a frame (no seq, no idle timer).
        if (msg.reply) msg.respond();
        return;
      }
      if (msg.headers?.code === 503) {
        fail(ModelFailureKind.UNAVAILABLE, "no provider gateway is listening", true);
        return;
      }
      let events: ModelEvent[];
      try {
        events = decodeModelEventFrame(msg.data);
      } catch {
        finish(cycle.abandon("protocol", ModelFailureKind.PROTOCOL, "undecodable model event", false));
        return;
      }
      armIdleTimer();
      const first = events[0];
      if (first?.seq === 1n && first.event.case === "failure" && first.event.value.kind === ModelFailureKind.HISTORY_BASE_UNKNOWN && request.historyBase !== undefined) {
        finish({ kind: "base_unknown" });
        return;
      }
      for (const event of events) {
        if (event.seq !== expectedSeq) {
          fail(ModelFailureKind.UNAVAILABLE, `model event sequence gap: expected ${expectedSeq}, got ${event.seq}`, true);
          return;
        }
        expectedSeq += 1n;
        const step = cycle.push(event);
        if (step.kind === "ended") {
          finish(step.outcome);
          return;
        }
        if (step.forward !== undefined) forward(step.forward);
      }
    };

    const inbox = createInbox();
    const sub: Subscription = nc.subscribe(inbox, {
      callback: (err, msg) => {
        if (err) {
          fail(ModelFailureKind.UNAVAILABLE, `model event subscription failed: ${err.message}`, true);
          return;
        }
        onMessage(msg);
      },
    });
    signal.addEventListener("abort", onAbort, { once: true });
    armIdleTimer();
    const bytes = toBinary(ModelRequestSchema, request);
    const send = (data: Uint8Array, headers?: MsgHdrs): void => {
      if (settled) return;
      try {
        nc.publish(names.providerInvoke, data, { reply: inbox, ...(headers === undefined ? {} : { headers }) });
      } catch (err) {
        // e.g. the connection is closed: nothing was sent.
        finish(cycle.abandon("protocol", ModelFailureKind.PROTOCOL, `could not send the model request: ${(err as Error).message}`, false));
      }
    };
    if (!options.payloads.tooLarge(bytes)) send(bytes);
    else
      options.payloads.outgoing(bytes).then(
        (outgoing) => send(outgoing.data, outgoing.headers),
        (err: unknown) => fail(ModelFailureKind.UNAVAILABLE, `could not store the model request (${bytes.length} bytes): ${(err as Error).message}`, true),
      );
  });
}
