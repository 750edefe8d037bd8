/**
 * revision.compact: a run replaces its history by a summary and the messages
 * it keeps. The new revision starts a chain of its own and records the head
 * it replaced (compacted_from_id); nothing of the replaced history changes.
 * Conditional on the active run and the expected head; idempotent per
 * (run, summary call index).
 */
import type pg from "pg";
import { UserOrigin, type Message } from "@byok/contracts";
import { inTransaction } from "./database.ts";
import { canonicalMessage, type CanonicalMessage } from "./message-codec.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { findRevision, findRunAppend, insertCompactedRevision, loadRevisionHistory } from "./revisions.ts";
import { moveRunHead } from "./run-rows.ts";
import { lockRunConversation, writeRejection } from "./write-guards.ts";

export interface CompactHistoryInput {
  readonly runId: string;
  readonly expectedHeadRevisionId: string;
  readonly summary: Message | undefined;
  readonly keptMessageIds: readonly string[];
  readonly summarizedCount: number;
  readonly providerCallIndex: number;
}

export interface CompactedHistory {
  readonly revisionId: string;
  readonly messages: Message[];
  /** The compaction had already been made (nothing written now). */
  readonly repeated: boolean;
}

export function compactHistory(pool: pg.Pool, input: CompactHistoryInput): Promise<Outcome<CompactedHistory>> {
  const summary = input.summary;
  if (summary?.body.case !== "user" || summary.body.value.origin !== UserOrigin.SUMMARY) {
    return Promise.resolve(reject("invalid", "revision.compact needs a user message with origin SUMMARY"));
  }
  if (input.providerCallIndex <= 0) return Promise.resolve(reject("invalid", "revision.compact needs the summary call's provider_call_index"));
  const appendKey = `compaction:${input.providerCallIndex}`;
  return inTransaction<CompactedHistory>(pool, async (tx) => {
    const locked = await lockRunConversation(tx, input.runId);
    if (locked.kind !== "ok") return locked;
    const { conversation } = locked.value;
    const earlier = await findRunAppend(tx, input.runId, appendKey);
    if (earlier) {
      const history = await loadRevisionHistory(tx, earlier.id);
      if (!history) throw new Error(`compacted revision ${earlier.id} vanished`);
      return ok({ revisionId: earlier.id, messages: history.messages, repeated: true });
    }
    const refused = writeRejection(conversation, input.runId, input.expectedHeadRevisionId);
    if (refused) return { kind: "rejected", rejection: refused };
    const source = await findRevision(tx, input.expectedHeadRevisionId);
    const sourceHistory = source === undefined ? undefined : await loadRevisionHistory(tx, source.id);
    if (source === undefined || sourceHistory === undefined) return reject("invalid", "revision.compact needs a non-empty head");

    // Kept messages must come from the head's history, in its order, each once.
    const position = new Map(sourceHistory.messageIds.map((id, i) => [id, i]));
    const kept: Array<{ id: string; message: CanonicalMessage }> = [];
    let last = -1;
    for (const id of input.keptMessageIds) {
      const at = position.get(id);
      if (at === undefined) return reject("invalid", `kept message ${id} is not in the history of ${source.id}`);
      if (at <= last) return reject("invalid", "kept messages must follow the history's order, each once");
      last = at;
      kept.push({ id, message: canonicalMessage(sourceHistory.messages[at] as Message) });
    }
    const revision = await insertCompactedRevision(tx, {
      conversationId: conversation.id,
      source,
      summary: canonicalMessage(summary),
      kept,
      summarizedCount: input.summarizedCount,
      run: { runId: input.runId, appendKey },
    });
    await moveRunHead(tx, conversation.id, input.runId, revision.id, input.providerCallIndex);
    const messages = [canonicalMessage(summary).message, ...kept.map((k) => k.message.message)];
    return ok({ revisionId: revision.id, messages, repeated: false });
  });
}
