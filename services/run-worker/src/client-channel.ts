/**
 * The run owner's side of the client boundary (design/ARCHITECTURE.md §3):
 * UI events on core NATS `names.runEvents(run_id)` with a per-run sequence, and
 * state events as requests on `names.runState(run_id)` that the client
 * acknowledges once it has projected them (the barrier).
 */
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { NoRespondersError, TimeoutError, type NatsConnection } from "@nats-io/transport-node";
import { ClientEventSchema, StateAckSchema, StateEventSchema, type BusNames, type StateEvent } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { ABORTED, raceAbort } from "./abort.ts";
import type { ForwardedEvent } from "./model-cycle.ts";

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

export class ClientChannel {
  readonly #nc: NatsConnection;
  readonly #eventsSubject: string;
  readonly #stateSubject: string;
  readonly #ackTimeoutMs: number;
  readonly #log: Logger;
  #seq = 0n;

  constructor(nc: NatsConnection, names: BusNames, runId: string, ackTimeoutMs: number, log: Logger) {
    this.#nc = nc;
    this.#eventsSubject = names.runEvents(runId);
    this.#stateSubject = names.runState(runId);
    this.#ackTimeoutMs = ackTimeoutMs;
    this.#log = log;
  }

  /** Publish one UI event (fire and forget; deltas are not state). */
  emit(modelCallIndex: number, event: ForwardedEvent): void {
    this.#seq += 1n;
    const payload = toBinary(ClientEventSchema, create(ClientEventSchema, { seq: this.#seq, modelCallIndex, event }));
    try {
      this.#nc.publish(this.#eventsSubject, payload);
    } catch (err) {
      this.#log.warn({ err, seq: this.#seq.toString() }, "could not publish client event");
    }
  }

  /** Send a state event and wait for the client's StateAck (or the run's cancellation). */
  async barrier(event: StateEventInit, signal: AbortSignal): Promise<BarrierOutcome> {
    const outcome = await raceAbort(this.#request(event), signal);
    return outcome === ABORTED ? { kind: "aborted" } : outcome;
  }

  /** Send the terminal state event; an unanswered terminal is logged, never an error. */
  async terminal(event: StateEventInit): Promise<void> {
    const outcome = await this.#request(event);
    if (outcome.kind !== "acked") this.#log.info({ outcome }, "terminal state event not acknowledged");
  }

  async #request(init: StateEventInit): Promise<BarrierOutcome> {
    const event: StateEvent = create(StateEventSchema, init);
    let data: Uint8Array;
    try {
      const reply = await this.#nc.request(this.#stateSubject, toBinary(StateEventSchema, event), { timeout: this.#ackTimeoutMs });
      data = reply.data;
    } catch (err) {
      if (err instanceof TimeoutError) return { kind: "client_gone", reason: `no state ack within ${this.#ackTimeoutMs} ms` };
      if (err instanceof NoRespondersError || (err as Error)?.cause instanceof NoRespondersError) return { kind: "client_gone", reason: "no client is listening" };
      return { kind: "client_gone", reason: `state request failed: ${(err as Error).message}` };
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
