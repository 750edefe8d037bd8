/**
 * The run owner's side of the client boundary (design/ARCHITECTURE.md §3):
 * UI events on core NATS `names.runEvents(run_id)` with a per-run sequence
 * (the events of one pass of the event loop in one message, event-frames.ts
 * of @byok/contracts), and
 * state events as requests on `names.runState(run_id)` that the client
 * acknowledges once it has projected them (the barrier). The terminal is sent
 * again when it gets no answer (the client treats repeats idempotently); a
 * probe asks whether the client still listens.
 *
 * Text and thinking deltas of one block of one model call that come within
 * the window of the last one sent travel as one ClientEvent (DeltaCoalescer
 * of @byok/model-stream: the first of a block goes at once, nothing is
 * reordered); the window is the worker's, shared by its runs, so the held
 * deltas of all runs go out together. What is pending is sent before every
 * state event, so no barrier overtakes a delta.
 */
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { NoRespondersError, TimeoutError, type NatsConnection } from "@nats-io/transport-node";
import { encodeClientEventPart, frameMessagesWithin, StateAckSchema, StateEventSchema, type BusNames, type ClientModelCallIndex, type RunId, type StateEvent } from "@byok/contracts";
import { blockDeltaRule, DeltaCoalescer, DeltaWindow, type CoalescingRule } from "@byok/model-stream";
import { BusPayloads, type Logger } from "@byok/platform";
import { systemClock } from "@byok/platform/clock";
import { ABORTED, raceAbort } from "./abort.ts";
import type { ForwardedEvent } from "./model-cycle.ts";
import { assertNever } from "./assert-never.ts";

export type StateEventInit = MessageInitShape<typeof StateEventSchema>;

/** How a barrier ended. */
export type BarrierOutcome =
  | { readonly kind: "acked" }
  /** The client answered but could not project the state. */
  | { readonly kind: "rejected"; readonly error: string }
  /** Nobody answered (no responders, timeout, transport error): the client is gone. */
  | { readonly kind: "client_gone"; readonly reason: string }
  /** The run was cancelled while waiting. */
  | { readonly kind: "aborted" };

/** What a liveness probe found out. */
export type ProbeOutcome =
  /** The client's stream is open. */
  | { readonly kind: "alive" }
  /** The client answered that the run's stream has ended. */
  | { readonly kind: "ended"; readonly error: string }
  /** Nobody subscribes to the state subject (the client is gone, or reconnecting to NATS). */
  | { readonly kind: "no_responders" }
  /** No answer in time, or the request failed. */
  | { readonly kind: "no_answer"; readonly reason: string };

/** How a state request ended, before the caller decides what it means. */
type StateReply =
  | { readonly kind: "acked" }
  | { readonly kind: "rejected"; readonly error: string }
  | { readonly kind: "no_responders" }
  | { readonly kind: "no_answer"; readonly reason: string };

/** Sends of the terminal state event when it gets no answer (lost on the way, or the client was busy). */
const TERMINAL_ATTEMPTS = 3;

interface IndexedEvent {
  readonly modelCallIndex: ClientModelCallIndex;
  readonly event: ForwardedEvent;
}

/** Deltas of the same block of the same model call are joined. */
function indexedDeltaRule(): CoalescingRule<IndexedEvent> {
  const inner = blockDeltaRule<ForwardedEvent>();
  return {
    key: (e) => {
      const key = inner.key(e.event);
      return key === undefined ? undefined : `${e.modelCallIndex}:${key}`;
    },
    merge: (a, b) => ({ modelCallIndex: a.modelCallIndex, event: inner.merge(a.event, b.event) }),
  };
}

export interface ClientChannelOptions {
  /** The window deltas of one block are joined in (shared by the runs of a worker); undefined (default) = every delta alone. */
  readonly window?: DeltaWindow | undefined;
}

export class ClientChannel {
  readonly #nc: NatsConnection;
  readonly #eventsSubject: string;
  readonly #stateSubject: string;
  readonly #payloads: BusPayloads;
  readonly #ackTimeoutMs: number;
  readonly #log: Logger;
  readonly #coalescer: DeltaCoalescer<IndexedEvent>;
  #seq = 0n;
  /** Encoded events of this pass not sent yet. */
  #pending: Uint8Array[] = [];

  constructor(nc: NatsConnection, names: BusNames, runId: RunId, ackTimeoutMs: number, log: Logger, options: ClientChannelOptions = {}) {
    this.#nc = nc;
    this.#payloads = BusPayloads.of(nc, names);
    this.#eventsSubject = names.runEvents(runId);
    this.#stateSubject = names.runState(runId);
    this.#ackTimeoutMs = ackTimeoutMs;
    this.#log = log;
    this.#coalescer = new DeltaCoalescer((e) => this.#publish(e.modelCallIndex, e.event), indexedDeltaRule(), options.window ?? new DeltaWindow(systemClock, 0));
  }

  /** Publish one UI event of model call `modelCallIndex` (fire and forget; deltas are not state). */
  emit(modelCallIndex: ClientModelCallIndex, event: ForwardedEvent): void {
    this.#coalescer.push({ modelCallIndex, event });
  }

  /** Sends a delta still waiting for its window, and the events of this pass, now. */
  flush(): void {
    this.#coalescer.flush();
    this.#sendFrame();
  }

  /** Events go out together once this pass's work is done (process.nextTick: before any I/O is polled). */
  #publish(modelCallIndex: ClientModelCallIndex, event: ForwardedEvent): void {
    this.#seq += 1n;
    this.#pending.push(encodeClientEventPart({ seq: this.#seq, modelCallIndex, event }));
    if (this.#pending.length === 1) process.nextTick(this.#sendFrame);
  }

  readonly #sendFrame = (): void => {
    if (this.#pending.length === 0) return;
    const parts = this.#pending;
    this.#pending = [];
    try {
      // One message, unless the pass made more than one may carry (a very long tool call's arguments, then the whole response).
      for (const frame of frameMessagesWithin(parts, this.#payloads.inlineLimit)) this.#nc.publish(this.#eventsSubject, frame);
    } catch (err) {
      this.#log.warn({ err, seq: this.#seq.toString(), events: parts.length }, "could not publish client events");
    }
  };

  /** Send a state event and wait for the client's StateAck (or the run's cancellation). */
  async barrier(event: StateEventInit, signal: AbortSignal): Promise<BarrierOutcome> {
    const reply = await raceAbort(this.#request(event, this.#ackTimeoutMs), signal);
    if (reply === ABORTED) return { kind: "aborted" };
    switch (reply.kind) {
      case "acked":
      case "rejected":
        return reply;
      case "no_responders":
        return { kind: "client_gone", reason: "no client is listening" };
      case "no_answer":
        return { kind: "client_gone", reason: reply.reason };
      default:
        return assertNever(reply);
    }
  }

  /**
   * Send the terminal state event, again (up to TERMINAL_ATTEMPTS) while it
   * gets no answer; no responders or any answer ends the attempts. An
   * unacknowledged terminal is logged, never an error.
   */
  async terminal(event: StateEventInit): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const reply = await this.#request(event, this.#ackTimeoutMs);
      if (reply.kind === "acked") return;
      if (reply.kind !== "no_answer" || attempt >= TERMINAL_ATTEMPTS) {
        this.#log.info({ reply, attempts: attempt }, "terminal state event not acknowledged");
        return;
      }
      this.#log.warn({ reason: reply.reason, attempt }, "terminal state event unanswered; sending it again");
    }
  }

  /** Ask whether the client still listens; waits at most `timeoutMs`. */
  async probe(timeoutMs: number): Promise<ProbeOutcome> {
    const reply = await this.#request({ event: { case: "probe", value: {} } }, timeoutMs);
    switch (reply.kind) {
      case "acked":
        return { kind: "alive" };
      case "rejected":
        return { kind: "ended", error: reply.error };
      case "no_responders":
      case "no_answer":
        return reply;
      default:
        return assertNever(reply);
    }
  }

  async #request(init: StateEventInit, timeoutMs: number): Promise<StateReply> {
    // A state event must not overtake the deltas before it (the adapter projects them in order).
    this.flush();
    const event: StateEvent = create(StateEventSchema, init);
    let data: Uint8Array;
    try {
      const bytes = toBinary(StateEventSchema, event);
      // A state event too large for one NATS message (a large tool result in its round) goes through the payload bucket.
      // An inline state event goes out without an await, so that no event published after it overtakes it.
      const outgoing = this.#payloads.tooLarge(bytes) ? await this.#payloads.outgoing(bytes) : { data: bytes, headers: undefined };
      const reply = await this.#nc.request(this.#stateSubject, outgoing.data, { timeout: timeoutMs, ...(outgoing.headers === undefined ? {} : { headers: outgoing.headers }) });
      data = reply.data;
    } catch (err) {
      if (err instanceof TimeoutError) return { kind: "no_answer", reason: `no state ack within ${timeoutMs} ms` };
      if (err instanceof NoRespondersError || (err as Error)?.cause instanceof NoRespondersError) return { kind: "no_responders" };
      return { kind: "no_answer", reason: `state request failed: ${(err as Error).message}` };
    }
    let ack;
    try {
      ack = fromBinary(StateAckSchema, data);
    } catch {
      return { kind: "rejected", error: "undecodable state ack" };
    }
    return ack.ok ? { kind: "acked" } : { kind: "rejected", error: ack.error || "client could not project the state" };
  }
}
