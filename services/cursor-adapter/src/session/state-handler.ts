/**
 * StateEvents from the run owner (request/reply on byok.runs.<run_id>.state):
 * commits are projected into Cursor checkpoints before the StateAck (the
 * barrier), terminals end the stream. A new owner re-sends the pending event
 * after failover, so events are handled once per revision id / terminal and in
 * arrival order.
 */
import { CommitCause, type RunTerminal, type StateCommitted, type StateEvent } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { BlobNotSyncedError } from "../checkpoint/client-blobs.ts";
import type { ConversationProjection } from "../checkpoint/conversation-projection.ts";
import { KvError } from "../checkpoint/kv-channel.ts";
import type { EventFrames } from "../interaction/event-frames.ts";
import type { EndOutcome } from "../transport/session-port.ts";
import { cancelledOutcome, endOutcomeOf } from "./failures.ts";
import type { StateAckInit } from "./run-bus.ts";

export interface StateHandlerPorts {
  projection: ConversationProjection;
  frames: EventFrames;
  send(message: agent.AgentServerMessage): void;
  /** Ends the Cursor stream; `byTerminal` = the run owner already finished the run. */
  end(outcome: EndOutcome, byTerminal: boolean): void;
  ended(): boolean;
  log: Logger;
}

const STREAM_CLOSED: StateAckInit = { ok: false, error: "the client stream is closed" };

export class StateHandler {
  readonly #ports: StateHandlerPorts;
  readonly #commits = new Map<string, StateAckInit>();
  #terminalSeen = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(ports: StateHandlerPorts) {
    this.#ports = ports;
  }

  handle(event: StateEvent): Promise<StateAckInit> {
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
        return { ok: false, error: "tool rounds are not supported by this adapter yet" };
      case undefined:
        return { ok: false, error: "empty state event" };
      default: {
        const unreachable: never = e;
        throw new Error(`unknown state event ${String(unreachable)}`);
      }
    }
  }

  async #commit(committed: StateCommitted): Promise<StateAckInit> {
    const key = committed.revisionId;
    const seen = key === "" ? undefined : this.#commits.get(key);
    if (seen !== undefined) return seen;
    if (this.#ports.ended()) return STREAM_CLOSED;
    const ack = await this.#project(committed);
    if (key !== "" && ack.ok) this.#commits.set(key, ack);
    return ack;
  }

  async #project(committed: StateCommitted): Promise<StateAckInit> {
    switch (committed.cause) {
      case CommitCause.FINAL_ANSWER:
        break;
      case CommitCause.TOOL_ROUND_STAGED:
      case CommitCause.TOOL_RESULT:
      case CommitCause.TOOL_ROUND_SETTLED:
        return { ok: false, error: "tool rounds are not supported by this adapter yet" };
      case CommitCause.UNSPECIFIED:
        return { ok: false, error: "state commit without a cause" };
      default:
        return { ok: false, error: `unknown commit cause ${String(committed.cause)}` };
    }
    const { frames, projection } = this.#ports;
    let messages: agent.AgentServerMessage[];
    try {
      messages = await projection.finalAnswerFrames({
        appended: committed.appended,
        turnUsage: committed.turnUsage,
        contextTokens: committed.contextTokens,
        thinkingDurationsMs: frames.thinkingDurations(),
      });
    } catch (error) {
      if (!(error instanceof KvError) && !(error instanceof BlobNotSyncedError)) throw error;
      this.#ports.log.warn({ err: error }, "client state could not be projected");
      this.#ports.end(endOutcomeOf({ kind: "client_blob", message: error.message }), false);
      return { ok: false, error: error.message };
    }
    // A cancel that won the race discards the not-yet-published checkpoints.
    if (this.#ports.ended()) return STREAM_CLOSED;
    frames.closeOpenBlocks();
    for (const message of messages) this.#ports.send(message);
    this.#ports.log.debug({ revision_id: committed.revisionId }, "final answer projected");
    return { ok: true };
  }

  #terminal(outcome: RunTerminal["outcome"]): StateAckInit {
    if (this.#terminalSeen || this.#ports.ended()) {
      this.#terminalSeen = true;
      return { ok: true };
    }
    this.#terminalSeen = true;
    switch (outcome.case) {
      case "completed": {
        const repeat = this.#ports.projection.repeatSettledFrame();
        if (repeat !== undefined) this.#ports.send(repeat);
        this.#ports.end({ kind: "ok" }, true);
        break;
      }
      case "failed":
        this.#ports.end(endOutcomeOf({ kind: "run_failed", failed: outcome.value }), true);
        break;
      case "cancelled":
        this.#ports.end(cancelledOutcome(outcome.value.reason), true);
        break;
      case undefined:
        this.#ports.end(endOutcomeOf({ kind: "internal", message: "the run ended without an outcome" }), true);
        break;
      default: {
        const unreachable: never = outcome;
        throw new Error(`unknown run outcome ${String(unreachable)}`);
      }
    }
    return { ok: true };
  }
}
