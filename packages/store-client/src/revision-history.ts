/**
 * A conversation's history as the store client hands it to the run worker:
 * the messages of a revision with their stored ids, its compaction and its
 * newest context measurement, and how an answer that sends only what follows a
 * revision the caller already holds (KnownHistory) becomes the whole history
 * again. run.begin and revision.messages both answer that way.
 */
import type { CompactionRecord, ContextAnchor, Message, StoreResponse } from "@byok/contracts";

/** revision.messages with what the run worker needs besides the messages. */
export interface RevisionHistory {
  readonly messages: Message[];
  /** Stored message ids, parallel to `messages`. */
  readonly messageIds: string[];
  /** Set when the history starts at a compacted revision. */
  readonly compaction: CompactionRecord | undefined;
  /** The newest provider measurement of a prefix of this history. */
  readonly anchor: ContextAnchor | undefined;
}

/** run.append's result. */
export interface AppendedMessages {
  readonly revisionId: string;
  /** Empty when the append was a repeat or the store rewrote a message: the stored messages are then read, not assumed. */
  readonly messageIds: readonly string[];
}

/** A revision whose whole history the caller holds (revision.messages then sends only what follows it). */
export interface KnownHistory {
  readonly revisionId: string;
  readonly history: RevisionHistory;
}

/** A revision.messages answer as the whole history (the known part in front when the answer continues it). */
export function historyOf(response: StoreResponse<"getRevisionMessages">, known: KnownHistory | undefined): RevisionHistory {
  if (known !== undefined && response.continuesRevisionId !== "" && response.continuesRevisionId === known.revisionId) {
    const before = known.history;
    return {
      messages: [...before.messages, ...response.messages],
      messageIds: [...before.messageIds, ...response.messageIds],
      compaction: before.compaction,
      anchor: response.anchor ?? before.anchor,
    };
  }
  return { messages: response.messages, messageIds: response.messageIds, compaction: response.compaction, anchor: response.anchor };
}

/** revision.compact's result: the new revision and its whole history. */
export interface CompactedHistory {
  readonly revisionId: string;
  readonly messages: Message[];
}
