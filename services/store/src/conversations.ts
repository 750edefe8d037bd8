/** Conversations: owner member, head revision and the one active run (single writer). */
import { preparedQuery, type Queryable, type Transaction } from "./database.ts";
import { ok, reject, type Outcome } from "./outcome.ts";

export interface ConversationRow {
  readonly id: string;
  readonly memberId: string;
  readonly headRevisionId: string | null;
  readonly activeRunId: string | null;
}

interface ConversationDbRow {
  id: string;
  member_id: string;
  head_revision_id: string | null;
  active_run_id: string | null;
}

function fromDb(row: ConversationDbRow): ConversationRow {
  return { id: row.id, memberId: row.member_id, headRevisionId: row.head_revision_id, activeRunId: row.active_run_id };
}

const COLUMNS = "id, member_id, head_revision_id, active_run_id";

export async function findConversation(db: Queryable, conversationId: string): Promise<ConversationRow | undefined> {
  const result = await preparedQuery<ConversationDbRow>(db, `SELECT ${COLUMNS} FROM conversations WHERE id = $1`, [conversationId]);
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

/** Locks the conversation row for the rest of the transaction (the single-writer gate). */
export async function lockConversation(tx: Transaction, conversationId: string): Promise<ConversationRow | undefined> {
  const result = await preparedQuery<ConversationDbRow>(tx, `SELECT ${COLUMNS} FROM conversations WHERE id = $1 FOR UPDATE`, [conversationId]);
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

function ownerRejection(conversationId: string, memberId: string): Outcome<never> | undefined {
  if (conversationId === "") return reject("invalid", "conversation_id is required");
  if (memberId === "") return reject("invalid", "member_id is required");
  return undefined;
}

/**
 * Creates the conversation for `memberId` if new, then locks it; FORBIDDEN when another member owns it.
 * `created`: this transaction inserted it (one statement: a row it inserted is its own until it commits,
 * and has no revisions yet); an existing row is locked with a second.
 */
export async function ensureConversationLocked(tx: Transaction, conversationId: string, memberId: string): Promise<Outcome<ConversationRow & { readonly created: boolean }>> {
  const refused = ownerRejection(conversationId, memberId);
  if (refused) return refused;
  const inserted = await preparedQuery<ConversationDbRow>(tx, `INSERT INTO conversations (id, member_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`, [
    conversationId,
    memberId,
  ]);
  const row = inserted.rows[0];
  if (row) return ok({ ...fromDb(row), created: true });
  const conversation = await lockConversation(tx, conversationId);
  if (!conversation) throw new Error(`conversation ${conversationId} vanished after insert`);
  if (conversation.memberId !== memberId) return reject("forbidden", `conversation ${conversationId} belongs to another member`);
  return ok({ ...conversation, created: false });
}

/**
 * Creates the conversation for `memberId` if new, else locks it, in one
 * statement: an ON CONFLICT DO UPDATE whose WHERE is false updates nothing but
 * still locks the existing row. Nothing is returned: read the row with a later
 * statement (run-rows.ts countRepeatedBeginWithConversation), which sees it as
 * locked. Both ids must be non-empty.
 */
export async function createOrLockConversation(tx: Transaction, conversationId: string, memberId: string): Promise<void> {
  await preparedQuery(tx, "INSERT INTO conversations (id, member_id) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET member_id = conversations.member_id WHERE false", [
    conversationId,
    memberId,
  ]);
}

/**
 * Creates the conversation for `memberId` if new, without a transaction or a
 * lock (one statement): for a caller that only needs it to exist and be the
 * member's. FORBIDDEN when another member owns it.
 */
export async function ensureConversation(db: Queryable, conversationId: string, memberId: string): Promise<Outcome<void>> {
  const refused = ownerRejection(conversationId, memberId);
  if (refused) return refused;
  // The inserted row (if any) comes from `inserted`; an existing one from the table.
  const text = `WITH inserted AS (INSERT INTO conversations (id, member_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING member_id)
     SELECT member_id FROM inserted UNION ALL SELECT member_id FROM conversations WHERE id = $1`;
  let result = await preparedQuery<{ member_id: string }>(db, text, [conversationId, memberId]);
  // Inserted concurrently (committed while this statement waited): not in its snapshot, in the next one's.
  if (result.rows.length === 0) result = await preparedQuery<{ member_id: string }>(db, "SELECT member_id FROM conversations WHERE id = $1", [conversationId]);
  const owner = result.rows[0]?.member_id;
  if (owner === undefined) throw new Error(`conversation ${conversationId} vanished after insert`);
  return owner === memberId ? ok(undefined) : reject("forbidden", `conversation ${conversationId} belongs to another member`);
}
