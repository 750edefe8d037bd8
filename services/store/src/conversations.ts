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

/** Creates the conversation for `memberId` if new, then locks it; FORBIDDEN when another member owns it. */
export async function ensureConversationLocked(tx: Transaction, conversationId: string, memberId: string): Promise<Outcome<ConversationRow>> {
  if (conversationId === "") return reject("invalid", "conversation_id is required");
  if (memberId === "") return reject("invalid", "member_id is required");
  await preparedQuery(tx, "INSERT INTO conversations (id, member_id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", [conversationId, memberId]);
  const conversation = await lockConversation(tx, conversationId);
  if (!conversation) throw new Error(`conversation ${conversationId} vanished after insert`);
  if (conversation.memberId !== memberId) return reject("forbidden", `conversation ${conversationId} belongs to another member`);
  return ok(conversation);
}

export async function setHead(tx: Transaction, conversationId: string, headRevisionId: string | null): Promise<void> {
  await preparedQuery(tx, "UPDATE conversations SET head_revision_id = $2, updated_at = now() WHERE id = $1", [conversationId, headRevisionId]);
}

export async function setActiveRun(tx: Transaction, conversationId: string, activeRunId: string | null): Promise<void> {
  await preparedQuery(tx, "UPDATE conversations SET active_run_id = $2, updated_at = now() WHERE id = $1", [conversationId, activeRunId]);
}

/** When the retention job last deleted the conversation's content (null = never). */
export async function contentPurgedAt(db: Queryable, conversationId: string): Promise<Date | null> {
  const result = await preparedQuery<{ content_purged_at: Date | null }>(db, "SELECT content_purged_at FROM conversations WHERE id = $1", [conversationId]);
  return result.rows[0]?.content_purged_at ?? null;
}
