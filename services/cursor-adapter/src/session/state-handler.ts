/**
 * StateEvents from the run owner (request/reply on byok.runs.<run_id>.state):
 * commits are projected into Cursor checkpoints before the StateAck (the
 * barrier), ExecuteToolRound starts the round's tools (answered once they are
 * dispatched, not when they finish), terminals end the stream. A new owner
 * re-sends the pending event after failover, so events are handled once per
 * (cause, round, revision) / round / terminal and in arrival order. Liveness
 * probes are answered at once (ok while the Cursor stream is open), outside
 * that order.
 */
import { CommitCause, type ExecuteToolRound, type RunTerminal, type StateCommitted, type StateEvent } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import type { ConversationProjection } from "../checkpoint/conversation-projection.ts";
import type { EventFrames } from "../interaction/event-frames.ts";
import type { EndOutcome } from "../transport/session-port.ts";
import { cancelledOutcome, endOutcomeOf, failureMessage, sessionFailureOf, type SessionFailure } from "./failures.ts";
import type { StateAckInit } from "./run-bus.ts";
import type { ToolRoundCommits } from "./tool-round-commits.ts";
import type { ToolRoundDriver } from "./tool-round-driver.ts";

export interface StateHandlerPorts {
  projection: ConversationProjection;
  frames: EventFrames;
  driver: ToolRoundDriver;
  rounds: ToolRoundCommits;
  send(message: agent.AgentServerMessage): void;
  /** Ends the Cursor stream after the run owner finished the run (a terminal). */
  endByTerminal(outcome: EndOutcome): void;
  /** Ends the Cursor stream because this side failed; the run owner is told to stop. */
  fail(failure: SessionFailure): void;
  ended(): boolean;
  log: Logger;
}

const STREAM_CLOSED: StateAckInit = { ok: false, error: "the client stream is closed" };

export class StateHandler {
  readonly #ports: StateHandlerPorts;
  readonly #commits = new Map<string, StateAckInit>();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(ports: StateHandlerPorts) {
    this.#ports = ports;
  }

  handle(event: StateEvent): Promise<StateAckInit> {
    // A liveness probe is answered at once, not behind a commit being projected.
    if (event.event.case === "probe") return Promise.resolve(this.#ports.ended() ? STREAM_CLOSED : { ok: true });
    const result = this.#queue.then(() => this.#handle(event));
    this.#queue = result.catch(() => {});
    return result;
  }

  async #handle(event: StateEvent): Promise<StateAckInit> {
    const e = event.event;
    switch (e.case) {
      case "stateCommitted":
        return this.#commit(e.value);
      case "terminal":
        return this.#terminal(e.value.outcome);
      case "executeToolRound":
        return this.#execute(e.value);
      case "probe":
        return this.#ports.ended() ? STREAM_CLOSED : { ok: true };
      case undefined:
        return { ok: false, error: "empty state event" };
      default: {
        const unreachable: never = e;
        throw new Error(`unknown state event ${String(unreachable)}`);
      }
    }
  }

  #execute(round: ExecuteToolRound): StateAckInit {
    if (this.#ports.ended()) return STREAM_CLOSED;
    this.#ports.frames.closeOpenBlocks();
    this.#ports.driver.execute(round.roundId, round.calls);
    this.#ports.log.debug({ round_id: round.roundId, calls: round.calls.length }, "tool round dispatched");
    return { ok: true };
  }

  async #commit(committed: StateCommitted): Promise<StateAckInit> {
    // The staged commit of a round carries the revision the previous commit ended on: the key needs the cause.
    const key = `${committed.cause}\u0000${committed.roundId}\u0000${committed.revisionId}`;
    const seen = this.#commits.get(key);
    if (seen !== undefined) return seen;
    if (this.#ports.ended()) return STREAM_CLOSED;
    const ack = await this.#project(committed);
    if (ack.ok) this.#commits.set(key, ack);
    return ack;
  }

  async #project(committed: StateCommitted): Promise<StateAckInit> {
    let messages: agent.AgentServerMessage[];
    try {
      const framed = await this.#framesOf(committed);
      if (framed.kind === "rejected") return { ok: false, error: framed.error };
      messages = framed.messages;
    } catch (error) {
      // The checkpoint cannot go out, so the run cannot go on: end it here, and tell the owner why.
      const failure = sessionFailureOf(error);
      this.#ports.log.warn({ err: error, cause: CommitCause[committed.cause], failure: failure.kind }, "client state could not be projected");
      this.#ports.fail(failure);
      return { ok: false, error: failureMessage(failure) };
    }
    // A cancel that won the race discards the not-yet-published checkpoints.
    if (this.#ports.ended()) return STREAM_CLOSED;
    this.#ports.frames.closeOpenBlocks();
    for (const message of messages) this.#ports.send(message);
    this.#ports.log.debug({ revision_id: committed.revisionId, cause: CommitCause[committed.cause], round_id: committed.roundId }, "commit projected");
    return { ok: true };
  }

  async #framesOf(committed: StateCommitted): Promise<{ kind: "frames"; messages: agent.AgentServerMessage[] } | { kind: "rejected"; error: string }> {
    const { frames, projection, rounds } = this.#ports;
    switch (committed.cause) {
      case CommitCause.FINAL_ANSWER:
        return {
          kind: "frames",
          messages: await projection.finalAnswerFrames({
            appended: committed.appended,
            turnUsage: committed.turnUsage,
            contextTokens: committed.contextTokens,
            thinkingDurationsMs: frames.thinkingDurations(),
          }),
        };
      case CommitCause.TOOL_ROUND_STAGED:
        return { kind: "frames", messages: await rounds.staged(committed) };
      case CommitCause.TOOL_RESULT:
        rounds.result(committed);
        return { kind: "frames", messages: [] };
      case CommitCause.TOOL_ROUND_SETTLED:
        return { kind: "frames", messages: await rounds.settled(committed) };
      case CommitCause.COMPACTED: {
        const compaction = committed.compaction;
        if (compaction === undefined || compaction.history.length === 0) return { kind: "rejected", error: "a compaction commit without its history" };
        return {
          kind: "frames",
          messages: await projection.compactionFrames({ history: compaction.history, summary: compaction.summary, contextTokens: committed.contextTokens }),
        };
      }
      case CommitCause.UNSPECIFIED:
        return { kind: "rejected", error: "state commit without a cause" };
      default:
        return { kind: "rejected", error: `unknown commit cause ${String(committed.cause)}` };
    }
  }

  #terminal(outcome: RunTerminal["outcome"]): StateAckInit {
    // Every branch below ends the stream: a repeated terminal (or one after the stream ended) is only acknowledged.
    if (this.#ports.ended()) return { ok: true };
    switch (outcome.case) {
      case "completed": {
        const repeat = this.#ports.projection.repeatSettledFrame();
        if (repeat !== undefined) this.#ports.send(repeat);
        this.#ports.endByTerminal({ kind: "ok" });
        break;
      }
      case "failed":
        this.#ports.endByTerminal(endOutcomeOf({ kind: "run_failed", failed: outcome.value }));
        break;
      case "cancelled":
        this.#ports.endByTerminal(cancelledOutcome(outcome.value.reason));
        break;
      case undefined:
        this.#ports.endByTerminal(endOutcomeOf({ kind: "internal", message: "the run ended without an outcome" }));
        break;
      default: {
        const unreachable: never = outcome;
        throw new Error(`unknown run outcome ${String(unreachable)}`);
      }
    }
    return { ok: true };
  }
}
