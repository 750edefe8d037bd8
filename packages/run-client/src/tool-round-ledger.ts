/**
 * The client side's record of a run's tool rounds, by round id: which calls
 * were dispatched and which finished (with the adapter's own outcome), and the
 * publication of their results to the run owner, one at a time in the order
 * the calls finished.
 *
 * A round is known by its id: a repeated ExecuteToolRound (a new owner after
 * failover re-sends the calls that have no committed result) dispatches only
 * calls this session has not started, and a call that finished twice (a late
 * answer) is published once. What a call does on the client is the adapter's.
 */
import type { ToolCallPart } from "@byok/contracts";
import type { ToolResultInit } from "./run-bus.ts";

export interface ToolRoundLedgerPorts {
  /** Publishes one result to the run owner (ClientCommand over JetStream). */
  publishResult(result: ToolResultInit): Promise<void>;
  /** A result could not be published: the run cannot go on. */
  publishFailed(error: unknown): void;
  /** Once true, nothing more is published. */
  ended(): boolean;
}

export interface ToolRound<Info, Outcome> {
  readonly roundId: string;
  /** The round's calls in model order (from its first mention: staged commit or ExecuteToolRound). */
  readonly calls: readonly ToolCallPart[];
  /** What the adapter keeps per round (e.g. its start time). */
  readonly info: Info;
  readonly dispatched: ReadonlySet<string>;
  /** Outcomes of the calls that finished, by call id. */
  readonly outcomes: ReadonlyMap<string, Outcome>;
}

interface MutableRound<Info, Outcome> extends ToolRound<Info, Outcome> {
  readonly dispatched: Set<string>;
  readonly outcomes: Map<string, Outcome>;
}

export class ToolRoundLedger<Info, Outcome> {
  readonly #ports: ToolRoundLedgerPorts;
  readonly #rounds = new Map<string, MutableRound<Info, Outcome>>();
  #publishing: Promise<void> = Promise.resolve();

  constructor(ports: ToolRoundLedgerPorts) {
    this.#ports = ports;
  }

  has(roundId: string): boolean {
    return this.#rounds.has(roundId);
  }

  get(roundId: string): ToolRound<Info, Outcome> | undefined {
    return this.#rounds.get(roundId);
  }

  /** The round, recorded on its first mention with `info()`. */
  round(roundId: string, calls: readonly ToolCallPart[], info: () => Info): ToolRound<Info, Outcome> {
    const known = this.#rounds.get(roundId);
    if (known !== undefined) return known;
    const round: MutableRound<Info, Outcome> = { roundId, calls, info: info(), dispatched: new Set(), outcomes: new Map() };
    this.#rounds.set(roundId, round);
    return round;
  }

  /** The calls of `calls` not dispatched yet in this round, now marked dispatched (in the given order). */
  dispatch(roundId: string, calls: readonly ToolCallPart[]): ToolCallPart[] {
    const round = this.#rounds.get(roundId);
    if (round === undefined) throw new Error(`tool round ${roundId} is not recorded`);
    const fresh = calls.filter((call) => !round.dispatched.has(call.callId));
    for (const call of fresh) round.dispatched.add(call.callId);
    return fresh;
  }

  /**
   * Records a call's outcome; false (nothing recorded) when the call already
   * finished or the session ended. The caller then publishes with `publish`.
   */
  finish(roundId: string, callId: string, outcome: Outcome): boolean {
    const round = this.#rounds.get(roundId);
    if (round === undefined || this.#ports.ended() || round.outcomes.has(callId)) return false;
    round.outcomes.set(callId, outcome);
    return true;
  }

  /** Publishes a finished call's result after every result before it. */
  publish(result: ToolResultInit): void {
    this.#publishing = this.#publishing.then(async () => {
      if (this.#ports.ended()) return;
      try {
        await this.#ports.publishResult(result);
      } catch (error) {
        this.#ports.publishFailed(error);
      }
    });
  }

  /** Resolves once every result handed to `publish` so far was published (or failed). */
  published(): Promise<void> {
    return this.#publishing;
  }
}
