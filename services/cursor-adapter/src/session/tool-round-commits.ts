/**
 * The run owner's tool-round commits -> Cursor checkpoints (ARCHITECTURE §6):
 * - TOOL_ROUND_STAGED: the response's turn steps SET + ACKed, then one staged
 *   checkpoint whose pending entry is the whole assistant JSON (all calls,
 *   pendingToolCallStartedAtMs, execution contracts); roots unchanged.
 * - TOOL_RESULT: the committed pair is noted; no checkpoint per result.
 * - TOOL_ROUND_SETTLED: the round's pairs as roots, the tool-call steps and the
 *   todos SET + ACKed, then one settled checkpoint (read paths, todos).
 * Each returns the frames to send; the caller answers the barrier after them.
 */
import type { StateCommitted } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";
import type { ConversationProjection } from "../checkpoint/conversation-projection.ts";
import { resultOrder, RoundLedger, roundMessagesFromHistory } from "../checkpoint/round-projection.ts";
import { agentModeOf } from "../prompting/modes.ts";
import type { RunToolSetup } from "../request/prepare-run.ts";
import { buildPendingToolCallsJson } from "../tools/pending-calls.ts";
import type { ToolRoundDriver } from "./tool-round-driver.ts";

export interface ToolRoundCommitPorts {
  projection: ConversationProjection;
  driver: ToolRoundDriver;
  setup: RunToolSetup;
  store: Pick<StoreClient, "revisionMessages">;
  /** Thinking durations of the latest model call. */
  thinkingDurations(): readonly number[];
  log: Logger;
}

export class ToolRoundCommits {
  readonly #ports: ToolRoundCommitPorts;
  readonly #ledger = new RoundLedger();

  constructor(ports: ToolRoundCommitPorts) {
    this.#ports = ports;
  }

  async staged(committed: StateCommitted): Promise<agent.AgentServerMessage[]> {
    const { driver, projection, setup } = this.#ports;
    const assistant = committed.pending;
    if (assistant === undefined) throw new RoundCommitError("a staged tool round without its assistant message");
    const calls = assistant.content.flatMap((p) => (p.part.case === "toolCall" ? [p.part.value] : []));
    const { startedAtMs } = driver.beginRound(committed.roundId, calls);
    const pendingJson = buildPendingToolCallsJson({
      assistant,
      startedAtMs,
      allowedToolNames: setup.toolNames,
      dynamicToolNames: setup.dynamicToolNames,
    });
    return projection.toolRoundStagedFrames({
      assistant,
      pendingJson,
      contextTokens: committed.contextTokens,
      thinkingDurationsMs: this.#ports.thinkingDurations(),
    });
  }

  result(committed: StateCommitted): void {
    this.#ledger.record(committed.roundId, committed.appended);
  }

  async settled(committed: StateCommitted): Promise<agent.AgentServerMessage[]> {
    const { driver, projection, log } = this.#ports;
    const roundId = committed.roundId;
    const callIds = driver.callIdsOf(roundId);
    if (callIds === undefined) {
      // Settled under an earlier owner before this session heard of the round: nothing to project.
      log.warn({ round_id: roundId }, "settled tool round unknown to this session; no checkpoint");
      return [];
    }
    let messages = this.#ledger.messagesOf(roundId, callIds);
    if (messages === undefined) {
      log.info({ round_id: roundId }, "reading the settled round back from the store");
      messages = roundMessagesFromHistory(await this.#ports.store.revisionMessages(committed.revisionId), callIds);
    }
    const toolCalls = resultOrder(messages).flatMap((callId) => {
      const card = driver.completedCard(roundId, callId);
      return card === undefined ? [] : [card];
    });
    return projection.toolRoundSettledFrames({
      messages,
      toolCalls,
      readPaths: driver.readPaths,
      todos: driver.changedTodos,
      mode: driver.changedMode === undefined ? undefined : agentModeOf(driver.changedMode),
      plan: driver.changedPlan,
      contextTokens: committed.contextTokens,
    });
  }
}

/** The owner's commit cannot be projected as sent. */
export class RoundCommitError extends Error {
  override readonly name = "RoundCommitError";
}
