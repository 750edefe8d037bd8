/**
 * history.import: the client's checkpoint history becomes a revision of the
 * conversation. An identical history already stored (same chain digest) is
 * returned as is; otherwise the longest stored prefix is reused and one new
 * revision appends the rest. With a base revision the messages continue that
 * revision's history (a client that already imported the earlier part sends
 * only what is new): the cost follows what is new, not the conversation's
 * length. Import never moves the conversation head: runs do.
 */
import type pg from "pg";
import type { Message } from "@byok/contracts";
import { ensureConversation, ensureConversationLocked } from "./conversations.ts";
import { inTransaction } from "./database.ts";
import { canonicalMessage, prefixDigests } from "./message-codec.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { appendRevision, findLongestDigestMatch, findRevision, type RevisionRow } from "./revisions.ts";

export interface ImportHistoryInput {
  readonly conversationId: string;
  readonly memberId: string;
  readonly messages: readonly Message[];
  /** "" = `messages` is the whole history. */
  readonly baseRevisionId?: string;
}

export interface ImportedHistory {
  /** "" for an empty history. */
  readonly revisionId: string;
  /** True when an identical stored revision was returned. */
  readonly reused: boolean;
}

export function importHistory(pool: pg.Pool, input: ImportHistoryInput): Promise<Outcome<ImportedHistory>> {
  const messages = input.messages.map(canonicalMessage);
  const baseRevisionId = input.baseRevisionId ?? "";
  // Nothing to import onto nothing: the conversation only has to exist (no transaction, one statement).
  if (messages.length === 0 && baseRevisionId === "") {
    return ensureConversation(pool, input.conversationId, input.memberId).then((owned) =>
      owned.kind === "ok" ? ok({ revisionId: "", reused: false }) : owned,
    );
  }
  return inTransaction<ImportedHistory>(pool, async (tx) => {
    // The lock also serialises concurrent imports of the same history.
    const conversation = await ensureConversationLocked(tx, input.conversationId, input.memberId);
    if (conversation.kind !== "ok") return conversation;
    let base: RevisionRow | null = null;
    if (baseRevisionId !== "") {
      const found = await findRevision(tx, baseRevisionId);
      if (!found || found.conversationId !== input.conversationId) return reject("not_found", `revision ${baseRevisionId} is not a revision of conversation ${input.conversationId}`);
      base = found;
    }
    if (messages.length === 0) return ok({ revisionId: base?.id ?? "", reused: base !== null });
    const baseCount = base?.messageCount ?? 0;
    // Digests of base + messages[0..i]: a stored revision with one of them has exactly that history
    // (a conversation this import created has none to look for).
    const prefix = (conversation.value.created ? undefined : await findLongestDigestMatch(tx, input.conversationId, prefixDigests(base?.digest ?? null, messages))) ?? base;
    const matched = (prefix?.messageCount ?? 0) - baseCount;
    if (prefix && matched === messages.length) return ok({ revisionId: prefix.id, reused: true });
    const revision = await appendRevision(tx, {
      conversationId: input.conversationId,
      parent: prefix,
      messages: messages.slice(matched),
    });
    return ok({ revisionId: revision.id, reused: false });
  });
}
