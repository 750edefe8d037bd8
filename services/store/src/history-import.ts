/**
 * history.import: the client's checkpoint history becomes a revision of the
 * conversation. An identical history already stored (same chain digest) is
 * returned as is; otherwise the longest stored prefix is reused and one new
 * revision appends the rest. Import never moves the conversation head: runs do.
 */
import type pg from "pg";
import type { Message } from "@byok/contracts";
import { ensureConversationLocked } from "./conversations.ts";
import { inTransaction } from "./database.ts";
import { canonicalMessage, prefixDigests } from "./message-codec.ts";
import { ok, type Outcome } from "./outcome.ts";
import { appendRevision, findLongestDigestMatch } from "./revisions.ts";

export interface ImportHistoryInput {
  readonly conversationId: string;
  readonly memberId: string;
  readonly messages: readonly Message[];
}

export interface ImportedHistory {
  /** "" for an empty history. */
  readonly revisionId: string;
  /** True when an identical stored revision was returned. */
  readonly reused: boolean;
}

export function importHistory(pool: pg.Pool, input: ImportHistoryInput): Promise<Outcome<ImportedHistory>> {
  const messages = input.messages.map(canonicalMessage);
  const digests = prefixDigests(null, messages);
  return inTransaction<ImportedHistory>(pool, async (tx) => {
    // The lock also serialises concurrent imports of the same history.
    const conversation = await ensureConversationLocked(tx, input.conversationId, input.memberId);
    if (conversation.kind !== "ok") return conversation;
    if (messages.length === 0) return ok({ revisionId: "", reused: false });
    const prefix = await findLongestDigestMatch(tx, input.conversationId, digests);
    if (prefix && prefix.messageCount === messages.length) return ok({ revisionId: prefix.id, reused: true });
    const revision = await appendRevision(tx, {
      conversationId: input.conversationId,
      parent: prefix ?? null,
      messages: messages.slice(prefix?.messageCount ?? 0),
    });
    return ok({ revisionId: revision.id, reused: false });
  });
}
