/**
 * The first model call of a run, sent while run.begin is still in the store
 * (issue 15: fewer sequential waits before the first model call).
 *
 * run.begin must be durable before anything of a model call reaches the client
 * or the store (ownership, design/ARCHITECTURE.md §4). It need not be durable
 * before the request leaves: when the worker already knows the history the run
 * will start from (a new conversation: the run's own messages; a conversation
 * whose base revision this worker held last), it sends the first call at once
 * and holds every event the call streams. After run.begin answered, the engine
 * builds its first request from what the store returned; the early call is
 * adopted only when that request is byte for byte the one that was sent (then
 * the held events are forwarded in order and the rest as they come). Anything
 * else (the begin refused or found the run ended, a different history, a
 * compaction first, a stop) cancels it unseen, and its call index is not used
 * again, so the call id the gateway and the ledger know it by stays unique.
 *
 * Only the first delivery of a run sends one: a later delivery's first step
 * depends on what the store says (an open tool round, an appended answer), and
 * its early call would be an upstream request made twice. JetStream's delivery
 * count does not tell: a run handed back with a nak came again as delivery 1
 * (nats-server 2.9), and a run the server delivers twice (owner's acks lost in
 * a failover) is delivery 1 both times. So a worker claims the run first: it
 * publishes the run's marker to the RUNS_TAKEN stream only if that subject has
 * none (run-streams.ts of @byok/platform); the publish that succeeds is the
 * first delivery's. One JetStream round trip, while run.begin is in the store.
 */
import { toBinary } from "@bufbuild/protobuf";
import type { JetStreamClient } from "@nats-io/jetstream";
import {
  ModelRequestSchema,
  nextProviderCallIndex,
  NO_PROVIDER_CALL,
  type BusNames,
  type Message,
  type ModelRequest,
  type PreparedRun,
  type ProviderCallIndex,
  type RunId,
} from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { assertNever } from "./assert-never.ts";
import type { ForwardedEvent } from "./model-cycle.ts";
import type { InvocationOutcome, ModelInvoker } from "./model-invocation.ts";
import { buildModelRequest, type RunModelContext } from "./model-request.ts";
import type { RecentHistories } from "./recent-histories.ts";

/** Why an early call was not used (a metric label). */
export type EarlyCallDiscard = "request_differs" | "compaction_first" | "not_reached";

export interface EarlyCallObserver {
  earlyModelCall(outcome: "adopted" | EarlyCallDiscard): void;
}

export interface EarlyCallInputs {
  readonly invoker: ModelInvoker;
  readonly recent: RecentHistories;
  readonly observer: EarlyCallObserver;
  readonly log: Logger;
  /** True only for the first claim of the run by any worker (claimFirstTake); false on any doubt. */
  readonly claim: (runId: RunId) => Promise<boolean>;
}

const NO_PAYLOAD = new Uint8Array(0);

/** The run's marker in RUNS_TAKEN, published only if none is there: true = this is the run's first take. */
export async function claimFirstTake(js: JetStreamClient, names: BusNames, runId: RunId): Promise<boolean> {
  try {
    await js.publish(names.runTaken(runId), NO_PAYLOAD, { expect: { lastSubjectSequence: 0 } });
    return true;
  } catch {
    // Taken before (wrong last sequence), or the stream is not there: no early call either way.
    return false;
  }
}

/**
 * The history the run will start from, when this worker knows it without the
 * store: the base revision's messages (none for a new conversation, or the
 * ones this worker held last) followed by the run's own. undefined = unknown.
 */
export function knownStartHistory(prepared: PreparedRun, recent: RecentHistories): Message[] | undefined {
  const action = prepared.action;
  if (action.case !== "start") return undefined;
  if (prepared.baseRevisionId === "") return [...action.value.initialMessages];
  const known = recent.get(prepared.conversationId);
  if (known === undefined || known.revisionId !== prepared.baseRevisionId) return undefined;
  return [...known.history.messages, ...action.value.initialMessages];
}

/** What a worker's runs share for early calls (RunActorDeps). */
export interface EarlyCallDeps {
  readonly earlyModelCall: boolean;
  readonly invoker: ModelInvoker;
  readonly recent: RecentHistories;
  readonly metrics: EarlyCallObserver;
  readonly js: JetStreamClient;
  readonly names: BusNames;
}

/** The run's early call slot; undefined with EARLY_MODEL_CALL off. */
export function earlyCallSlot(deps: EarlyCallDeps, log: Logger, run: EarlyCallRun): EarlyCallSlot | undefined {
  if (!deps.earlyModelCall) return undefined;
  const { invoker, recent, metrics, js, names } = deps;
  return new EarlyCallSlot({ invoker, recent, observer: metrics, log, claim: (runId) => claimFirstTake(js, names, runId) }, run);
}

export interface EarlyCallRun {
  readonly run: RunModelContext;
  readonly prepared: PreparedRun;
  readonly deliveryCount: number;
  /** The run's abort signal (a stop cancels the early call too). */
  readonly runSignal: AbortSignal;
}

/**
 * Where a run's early call lands: sent in the background (claim, then the call) and taken by the
 * run once run.begin answered. A call not sent by then is not sent at all: the run never waits
 * for the claim.
 */
export class EarlyCallSlot {
  #call: EarlyModelCall | undefined;
  #open = true;

  /** Sends the run's first model call when its history is known and this is the run's first take. */
  constructor(inputs: EarlyCallInputs, { run, prepared, deliveryCount, runSignal }: EarlyCallRun) {
    if (deliveryCount !== 1) return;
    const history = knownStartHistory(prepared, inputs.recent);
    if (history === undefined) return;
    inputs
      .claim(run.runId)
      .then((first) => {
        if (!first || !this.#open || runSignal.aborted) return;
        const index = nextProviderCallIndex(NO_PROVIDER_CALL);
        this.#call = new EarlyModelCall(inputs, buildModelRequest(run, history, index), index, runSignal);
      })
      .catch((err: unknown) => inputs.log.warn({ err }, "could not send the early model call"));
  }

  /** The early call if it was sent by now (once); closes the slot. */
  take(): EarlyModelCall | undefined {
    this.#open = false;
    const call = this.#call;
    this.#call = undefined;
    return call;
  }

  /** Closes the slot; a call sent and not taken is cancelled unseen. */
  close(): void {
    this.take()?.discard("not_reached");
  }
}

/** Holding what the call streams, forwarding it to the run that adopted the call, or discarded. */
type EarlyState =
  | { readonly kind: "holding"; readonly events: ForwardedEvent[] }
  | { readonly kind: "forwarding"; readonly forward: (event: ForwardedEvent) => void }
  | { readonly kind: "discarded" };

export class EarlyModelCall {
  /** The provider call index the call was sent as (the run's first). */
  readonly index: ProviderCallIndex;
  readonly #bytes: Uint8Array;
  readonly #observer: EarlyCallObserver;
  readonly #log: Logger;
  readonly #cancel = new AbortController();
  readonly #outcome: Promise<InvocationOutcome>;
  #state: EarlyState = { kind: "holding", events: [] };

  constructor(inputs: EarlyCallInputs, request: ModelRequest, index: ProviderCallIndex, runSignal: AbortSignal) {
    this.index = index;
    this.#bytes = toBinary(ModelRequestSchema, request);
    this.#observer = inputs.observer;
    this.#log = inputs.log.child({ call_id: request.callId });
    this.#log.info({ messages: request.messages.length }, "early model call (run.begin not yet answered)");
    this.#outcome = inputs.invoker.invoke(request, (event) => this.#onEvent(event), AbortSignal.any([runSignal, this.#cancel.signal]));
  }

  /** True when `request` (what the engine would send now) is the request this call sent. */
  matches(request: ModelRequest): boolean {
    return Buffer.from(this.#bytes).equals(toBinary(ModelRequestSchema, request));
  }

  /** Takes the call over: the held events go to `forward` in order, then the rest as they come; resolves with the call's outcome. */
  adopt(forward: (event: ForwardedEvent) => void): Promise<InvocationOutcome> {
    const state = this.#state;
    if (state.kind !== "holding") throw new Error("early model call adopted twice or after it was discarded");
    this.#state = { kind: "forwarding", forward };
    for (const event of state.events) forward(event);
    this.#observer.earlyModelCall("adopted");
    return this.#outcome;
  }

  /** Cancels the call unseen (nothing it streamed reaches anyone); a no-op once adopted or discarded. */
  discard(reason: EarlyCallDiscard): void {
    if (this.#state.kind !== "holding") return;
    this.#state = { kind: "discarded" };
    this.#cancel.abort();
    this.#observer.earlyModelCall(reason);
    this.#log.info({ reason }, "early model call discarded");
  }

  #onEvent(event: ForwardedEvent): void {
    const state = this.#state;
    switch (state.kind) {
      case "holding":
        state.events.push(event);
        return;
      case "forwarding":
        state.forward(event);
        return;
      case "discarded":
        return;
      default:
        assertNever(state);
    }
  }
}
