/**
 * StateEvents from the run owner (request/reply on <prefix>.runs.<run_id>.state),
 * in the order every client adapter must keep:
 * - probes are answered at once (ok while the client's stream is open), outside
 *   the order of the other events;
 * - every other event is handled one at a time, in arrival order;
 * - a commit is projected once per (cause, round, revision): a new owner
 *   re-sends the pending commit after failover, and the repeat is answered
 *   with the first answer (a failed projection is not remembered, so a repeat
 *   tries again);
 * - ExecuteToolRound is acknowledged once its calls are dispatched, not when
 *   they finish (the adapter's ToolRoundLedger drops calls it already runs);
 * - a terminal ends the client's stream once; a repeat, or one after the
 *   stream ended, is only acknowledged.
 * Once the client's stream has ended, commits and rounds are refused
 * (ok: false), so the owner stops waiting for a client that is gone.
 *
 * What a commit or a round means for the client (Cursor checkpoints, ACP
 * session updates) is the adapter's: it implements StateEventPorts.
 */
import type { ExecuteToolRound, RunTerminal, StateCommitted, StateEvent } from "@byok/contracts";
import type { StateAckInit } from "./run-bus.ts";

export interface StateEventPorts {
  /** True once the client's stream ended (probes answer ok: false, commits and rounds are refused). */
  ended(): boolean;
  /** Projects one commit for the client; its answer is the barrier's StateAck. */
  commit(committed: StateCommitted): Promise<StateAckInit>;
  /** Dispatches the round's calls (the ledger skips calls already started). */
  execute(round: ExecuteToolRound): void;
  /** The owner finished the run: end the client's stream with this outcome. Called at most once. */
  terminal(outcome: RunTerminal["outcome"]): void;
}

/** The answer once the client's stream is gone. */
export const STREAM_CLOSED: StateAckInit = { ok: false, error: "the client stream is closed" };

export class StateEventRouter {
  readonly #ports: StateEventPorts;
  readonly #commits = new Map<string, StateAckInit>();
  #terminated = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(ports: StateEventPorts) {
    this.#ports = ports;
  }

  handle(event: StateEvent): Promise<StateAckInit> {
    // A liveness probe is answered at once, not behind a commit being projected.
    if (event.event.case === "probe") return Promise.resolve(this.#probe());
    const result = this.#queue.then(() => this.#handle(event));
    this.#queue = result.catch(() => {});
    return result;
  }

  #probe(): StateAckInit {
    return this.#ports.ended() ? STREAM_CLOSED : { ok: true };
  }

  async #handle(event: StateEvent): Promise<StateAckInit> {
    const e = event.event;
    switch (e.case) {
      case "stateCommitted":
        return this.#commit(e.value);
      case "terminal":
        return this.#terminal(e.value.outcome);
      case "executeToolRound":
        if (this.#ports.ended()) return STREAM_CLOSED;
        this.#ports.execute(e.value);
        return { ok: true };
      case "probe":
        return this.#probe();
      case undefined:
        return { ok: false, error: "empty state event" };
      default: {
        const unreachable: never = e;
        throw new Error(`unknown state event ${String(unreachable)}`);
      }
    }
  }

  async #commit(committed: StateCommitted): Promise<StateAckInit> {
    // The staged commit of a round carries the revision the previous commit ended on: the key needs the cause.
    const key = `${committed.cause}\u0000${committed.roundId}\u0000${committed.revisionId}`;
    const seen = this.#commits.get(key);
    if (seen !== undefined) return seen;
    if (this.#ports.ended()) return STREAM_CLOSED;
    const ack = await this.#ports.commit(committed);
    if (ack.ok) this.#commits.set(key, ack);
    return ack;
  }

  #terminal(outcome: RunTerminal["outcome"]): StateAckInit {
    if (this.#terminated || this.#ports.ended()) return { ok: true };
    this.#terminated = true;
    this.#ports.terminal(outcome);
    return { ok: true };
  }
}
