/**
 * Checkpoints (ConversationStateStructure) are rebuilt from the client's own
 * conversation_state, so fields this gateway does not understand survive; only
 * roots, turns, pending tool calls, read paths, todos, token details, mode
 * and plan and (after a compaction) the summary fields are replaced.
 */
import { clone, create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { BLOB_ID_BYTES } from "./blob-id.ts";

export interface CheckpointContent {
  roots: readonly Uint8Array[];
  turns: readonly Uint8Array[];
  /** Zero or one assistant JSON that is staged but not settled. */
  pending: readonly string[];
  /** Files successfully Read in the conversation. */
  readPaths: readonly string[];
  /** Blob ids of the TodoItems. */
  todos: readonly Uint8Array[];
  /** Context size of the last model call, when the provider reported it. */
  usedTokens: number | undefined;
  /** Context window of the run's model. */
  maxTokens: number;
  /** The run's mode, when the turn said which (or a SwitchMode changed it). */
  mode: agent.AgentMode | undefined;
  /** Blob id of the ConversationPlan, when CreatePlan made one in this run; undefined keeps the client's. */
  plan: Uint8Array | undefined;
  /** Set once the run compacted the history (else the client's summary fields stay). */
  summary: CheckpointSummary | undefined;
}

/** The summary fields of a compacted conversation. */
export interface CheckpointSummary {
  /** Blob id of the ConversationSummary. */
  summary: Uint8Array;
  /** Blob id of the newest ConversationSummaryArchive. */
  archive: Uint8Array;
  /** Blob ids of every archive, oldest first (the client's plus this run's). */
  archives: readonly Uint8Array[];
  selfSummaryCount: number;
}

const UINT32_MAX = 0xffff_ffff;

export function buildCheckpoint(base: agent.ConversationStateStructure, content: CheckpointContent): agent.ConversationStateStructure {
  const checkpoint = clone(agent.ConversationStateStructureSchema, base);
  checkpoint.rootPromptMessagesJson = [...content.roots];
  checkpoint.turns = [...content.turns];
  checkpoint.pendingToolCalls = [...content.pending];
  checkpoint.readPaths = [...content.readPaths];
  checkpoint.todos = [...content.todos];
  const tokens = base.tokenDetails ? clone(agent.ConversationTokenDetailsSchema, base.tokenDetails) : create(agent.ConversationTokenDetailsSchema);
  if (content.usedTokens !== undefined) tokens.usedTokens = Math.min(content.usedTokens, UINT32_MAX);
  tokens.maxTokens = Math.min(content.maxTokens, UINT32_MAX);
  checkpoint.tokenDetails = tokens;
  if (content.mode !== undefined && content.mode !== agent.AgentMode.UNSPECIFIED) checkpoint.mode = content.mode;
  if (content.plan !== undefined) checkpoint.plan = content.plan;
  if (content.summary !== undefined) {
    checkpoint.summary = content.summary.summary;
    checkpoint.summaryArchive = content.summary.archive;
    checkpoint.summaryArchives = [...content.summary.archives];
    checkpoint.selfSummaryCount = content.summary.selfSummaryCount;
  }
  return checkpoint;
}

/** Blob ids a checkpoint references directly (inline JSON roots are not blobs). */
export function referencedBlobIds(checkpoint: agent.ConversationStateStructure): Uint8Array[] {
  return [
    ...checkpoint.rootPromptMessagesJson.filter((r) => r.length === BLOB_ID_BYTES),
    ...checkpoint.turns,
    ...checkpoint.todos,
    ...(checkpoint.plan === undefined ? [] : [checkpoint.plan]),
    ...(checkpoint.summary === undefined ? [] : [checkpoint.summary]),
    ...(checkpoint.summaryArchive === undefined ? [] : [checkpoint.summaryArchive]),
    ...checkpoint.summaryArchives,
  ];
}

export function checkpointMessage(checkpoint: agent.ConversationStateStructure): agent.AgentServerMessage {
  return create(agent.AgentServerMessageSchema, { message: { case: "conversationCheckpointUpdate", value: checkpoint } });
}
