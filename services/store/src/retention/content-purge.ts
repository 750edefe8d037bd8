/**
 * Content retention: conversation content older than its team's
 * retention_days is deleted, the one exception to append-only storage.
 *
 * The unit is a conversation: once any of its stored messages (or blobs) is
 * older than the cut-off, its whole stored history goes (messages, revisions
 * with the compacted ones and their context anchors, tool rounds and results,
 * the blobs no other conversation refers to), in one
 * transaction that sets `byok.retention_purge` so the append-only triggers let
 * those DELETEs through (migration 4). A history is a chain: keeping its newer
 * part without the start would hand a model a silently truncated history.
 * Conversations, runs, the ledger and the audit log stay; each purge writes
 * one `retention.purged` audit row. A conversation with a running run is left
 * for the next pass.
 *
 * What happens next: the client still holds the history, so the next run of
 * that conversation imports it from the client's checkpoint as a fresh
 * history (history.import finds no stored prefix); run.begin names the
 * purge if it raced with the import.
 */
import type pg from "pg";
import { DEFAULT_TEAM_ID } from "@byok/contracts";
import { inTransaction, query, type Transaction } from "../database.ts";
import { ok } from "../outcome.ts";

export interface PurgeCounts {
  conversations: number;
  messages: number;
  revisions: number;
  toolRounds: number;
  toolResults: number;
  blobs: number;
}

export function emptyCounts(): PurgeCounts {
  return { conversations: 0, messages: 0, revisions: 0, toolRounds: 0, toolResults: 0, blobs: 0 };
}

interface ExpiredConversation {
  id: string;
  member_id: string;
  team_id: string;
  retention_days: number;
}

/**
 * Conversations holding content older than their team's retention (a member
 * without a member record, e.g. "local", belongs to the default team), not
 * running, oldest first.
 */
async function findExpired(pool: pg.Pool, now: Date, limit: number): Promise<ExpiredConversation[]> {
  const result = await query<ExpiredConversation>(
    pool,
    `SELECT c.id, c.member_id, t.id::text AS team_id, t.retention_days
       FROM conversations c
       LEFT JOIN members m ON m.id::text = c.member_id
       JOIN teams t ON t.id = COALESCE(m.team_id, $3::uuid)
      WHERE t.retention_days IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = c.active_run_id AND r.status = 'running')
        AND (EXISTS (SELECT 1 FROM messages msg WHERE msg.conversation_id = c.id AND msg.created_at < $1::timestamptz - make_interval(days => t.retention_days))
          OR EXISTS (SELECT 1 FROM blob_refs br WHERE br.conversation_id = c.id AND br.created_at < $1::timestamptz - make_interval(days => t.retention_days)))
      ORDER BY c.created_at
      LIMIT $2`,
    [now.toISOString(), limit, DEFAULT_TEAM_ID],
  );
  return result.rows;
}

async function deleted(tx: Transaction, text: string, values: unknown[]): Promise<number> {
  return (await query(tx, text, values)).rowCount ?? 0;
}

/** Deletes one conversation's stored content; undefined when it became busy (a run started) meanwhile. */
async function purgeConversation(tx: Transaction, conversation: ExpiredConversation, now: Date): Promise<PurgeCounts | undefined> {
  const locked = await query<{ active_run_id: string | null }>(tx, "SELECT active_run_id FROM conversations WHERE id = $1 FOR UPDATE", [conversation.id]);
  const activeRunId = locked.rows[0]?.active_run_id ?? null;
  if (activeRunId !== null) {
    const running = await query(tx, "SELECT 1 FROM runs WHERE id = $1 AND status = 'running'", [activeRunId]);
    if ((running.rowCount ?? 0) > 0) return undefined;
  }
  await query(tx, "SET LOCAL byok.retention_purge = 'on'");
  const id = conversation.id;
  // References into the content go first: runs and the conversation keep their rows, not their revisions.
  await query(tx, "UPDATE conversations SET head_revision_id = NULL, content_purged_at = $2, updated_at = now() WHERE id = $1", [id, now.toISOString()]);
  await query(
    tx,
    "UPDATE runs SET start_revision_id = NULL, head_revision_id = NULL WHERE conversation_id = $1 AND (start_revision_id IS NOT NULL OR head_revision_id IS NOT NULL)",
    [id],
  );
  const counts = emptyCounts();
  counts.conversations = 1;
  counts.toolResults = await deleted(tx, "DELETE FROM tool_results WHERE run_id IN (SELECT id FROM runs WHERE conversation_id = $1)", [id]);
  counts.toolRounds = await deleted(tx, "DELETE FROM tool_rounds WHERE run_id IN (SELECT id FROM runs WHERE conversation_id = $1)", [id]);
  // Context anchors measure revisions (migration 5); they go with them. Compacted revisions
  // (compacted_from_id) point only into their own conversation, so one DELETE takes the whole set.
  await query(tx, "DELETE FROM context_anchors WHERE revision_id IN (SELECT id FROM revisions WHERE conversation_id = $1)", [id]);
  counts.revisions = await deleted(tx, "DELETE FROM revisions WHERE conversation_id = $1", [id]);
  counts.messages = await deleted(tx, "DELETE FROM messages WHERE conversation_id = $1", [id]);
  // A blob goes only when no other conversation refers to it (blobs are shared by content).
  const refs = await query<{ blob_id: Buffer }>(tx, "DELETE FROM blob_refs WHERE conversation_id = $1 RETURNING blob_id", [id]);
  if (refs.rows.length > 0) {
    counts.blobs = await deleted(tx, "DELETE FROM blobs b WHERE b.id = ANY($1::bytea[]) AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.blob_id = b.id)", [
      refs.rows.map((r) => r.blob_id),
    ]);
  }
  await query(
    tx,
    `INSERT INTO audit_log (action, actor, member_id, team_id, details) VALUES ('retention.purged', 'retention', $1, $2, $3::jsonb)`,
    [conversation.member_id, conversation.team_id, JSON.stringify({ conversation_id: id, retention_days: conversation.retention_days, ...snake(counts) })],
  );
  return counts;
}

function snake(counts: PurgeCounts): Record<string, number> {
  return {
    messages: counts.messages,
    revisions: counts.revisions,
    tool_rounds: counts.toolRounds,
    tool_results: counts.toolResults,
    blobs: counts.blobs,
  };
}

function add(total: PurgeCounts, more: PurgeCounts): void {
  for (const key of Object.keys(total) as (keyof PurgeCounts)[]) total[key] += more[key];
}

/**
 * One retention pass at `now`: purges expired conversations in batches of
 * `batchSize`, each conversation in its own transaction, until none is left.
 */
export async function purgeExpiredContent(pool: pg.Pool, now: Date, batchSize = 100): Promise<PurgeCounts> {
  const total = emptyCounts();
  const skipped = new Set<string>();
  for (;;) {
    const batch = (await findExpired(pool, now, batchSize + skipped.size)).filter((c) => !skipped.has(c.id));
    if (batch.length === 0) return total;
    for (const conversation of batch) {
      const outcome = await inTransaction(pool, async (tx) => ok(await purgeConversation(tx, conversation, now)));
      const counts = outcome.kind === "ok" ? outcome.value : undefined;
      if (counts === undefined) skipped.add(conversation.id);
      else add(total, counts);
    }
  }
}
