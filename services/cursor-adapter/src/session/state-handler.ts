/**
 * StateEvents from the run owner, as Cursor sees them: the order, the probes
 * and the once-only rules are the shared StateEventRouter's (@byok/run-client);
 * this handler says what each event means here. Commits are projected into
 * Cursor checkpoints before the StateAck (the barrier), ExecuteToolRound
 * starts the round's tools (answered once they are dispatched), terminals end
 * the stream.
 */
import { CommitCause, type ExecuteToolRound, type RunTerminal, type StateCommitted, type StateEvent } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { STREAM_CLOSED, StateEventRouter, type StateAckInit } from "@byok/run-client";
import type { ConversationProjection } from "../checkpoint/conversation-projection.ts";
import type { EventFrames } from "../interaction/event-frames.ts";
import type { EndOutcome } from "../transport/session-port.ts";
import { cancelledOutcome, endOutcomeOf, failureMessage, sessionFailureOf, type SessionFailure } from "./failures.ts";
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
  /** The final answer's checkpoints went out: the projection's settled roots are the history of `revisionId`. */
  answerSettled(revisionId: string): void;
  ended(): boolean;
  log: Logger;
}

export class StateHandler {
  readonly #ports: StateHandlerPorts;
  readonly #router: StateEventRouter;

  constructor(ports: StateHandlerPorts) {
    this.#ports = ports;
    this.#router = new StateEventRouter({
      ended: () => ports.ended(),
      commit: (committed) => this.#project(committed),
      execute: (round) => this.#execute(round),
      terminal: (outcome) => this.#terminal(outcome),
    });
  }

  handle(event: StateEvent): Promise<StateAckInit> {
    return this.#router.handle(event);
  }

  #execute(round: ExecuteToolRound): void {
    this.#ports.frames.closeOpenBlocks();
    this.#ports.driver.execute(round.roundId, round.calls);
    this.#ports.log.debug({ round_id: round.roundId, calls: round.calls.length }, "tool round dispatched");
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
    if (committed.cause === CommitCause.FINAL_ANSWER) this.#ports.answerSettled(committed.revisionId);
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

  /** Every branch ends the stream (the router hands over one terminal, while the stream is open). */
  #terminal(outcome: RunTerminal["outcome"]): void {
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
  }
}
