/**
 * run.append: a run appends messages (its final answer, runtime events) as one
 * new revision, only while it is the conversation's active run and only onto the
 * head it expects. Idempotent: one append per (run, provider_call_index) when the
 * index is set, else per (run, expected head, messages).
 */
import type pg from "pg";
import type { Message } from "@byok/contracts";
import { commitBehind, inTransaction, together } from "./database.ts";
import { canonicalMessage, listDigest } from "./message-codec.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { findRunAppendAndHead, prepareAppend } from "./revisions.ts";
import { appendMovingRunHead } from "./run-rows.ts";
import { lockRunConversation, writeRejection } from "./write-guards.ts";

export interface AppendMessagesInput {
  readonly runId: string;
  readonly expectedHeadRevisionId: string;
  readonly messages: readonly Message[];
  readonly providerCallIndex: number;
  /** Input tokens the provider reported for the call built from the expected head (its context anchor). */
  readonly requestInputTokens?: bigint | undefined;
}

export interface AppendedMessages {
  readonly revisionId: string;
  /** True when this append had already been made (nothing appended now). */
  readonly repeated: boolean;
  /** The appended messages' ids when they were stored exactly as sent (not on a repeat). */
  readonly messageIds: readonly string[];
}

export function appendMessages(pool: pg.Pool, input: AppendMessagesInput): Promise<Outcome<AppendedMessages>> {
  if (input.messages.length === 0) return Promise.resolve(reject("invalid", "run.append needs at least one message"));
  const messages = input.messages.map(canonicalMessage);
  const appendKey =
    input.providerCallIndex > 0 ? `call:${input.providerCallIndex}` : `messages:${input.expectedHeadRevisionId}:${listDigest(messages)}`;
  return inTransaction<AppendedMessages>(pool, async (tx) => {
    // First round trip (behind BEGIN): the locks, then the earlier append (a repeat) and the head
    // (the parent of a new append), read behind the locks.
    const [locked, { earlier, head }] = await together(lockRunConversation(tx, input.runId), findRunAppendAndHead(tx, input.runId, appendKey));
    if (locked.kind !== "ok") return locked;
    const { conversation } = locked.value;
    if (earlier) return ok({ revisionId: earlier.id, repeated: true, messageIds: [] });
    const refused = writeRejection(conversation, input.runId, input.expectedHeadRevisionId);
    if (refused) return { kind: "rejected", rejection: refused };
    const parent = conversation.headRevisionId === null ? null : head;
    if (parent === undefined || (parent !== null && parent.id !== conversation.headRevisionId))
      throw new Error(`conversation ${conversation.id} head ${conversation.headRevisionId} not found`);
    // The call's context anchor (the head it was built from) is written with the head move,
    // and the head moves in the statement that appends; COMMIT rides behind it (second round trip).
    const anchor =
      parent !== null && input.requestInputTokens !== undefined
        ? { revisionId: parent.id, messageCount: parent.messageCount, inputTokens: input.requestInputTokens }
        : undefined;
    const append = prepareAppend({ conversationId: conversation.id, parent, messages, run: { runId: input.runId, appendKey } });
    const written = appendMovingRunHead(tx, append, { conversationId: conversation.id, runId: input.runId, providerCallIndex: input.providerCallIndex, anchor });
    const asSent = messages.every((m) => m.rewritten !== true);
    return commitBehind(written.then(() => ({ revisionId: append.revision.id, repeated: false, messageIds: asSent ? append.revision.messageIds : [] })));
  });
}
