/**
 * Starts a conversation takes only once (StartAction.once_client_ids): which
 * of the given user message client ids the conversation already holds, and
 * through which run. A message counts when a revision holding it was appended
 * by a run that is running or completed, or imported from the client's own
 * history; one appended by a run that failed or was cancelled does not (a
 * retry of that start is applied again).
 */
import { preparedQuery, type Queryable } from "./database.ts";

/** Marks a client id taken by history the client imported (no run appended it). */
export const IMPORTED_HOLDER = "imported";

/** client id -> the run that appended it (IMPORTED_HOLDER for imported history). */
export async function takenClientIds(db: Queryable, conversationId: string, clientIds: readonly string[]): Promise<Map<string, string>> {
  if (clientIds.length === 0) return new Map();
  // Message bodies are protobuf JSON of byok.v1.Message: {"user": {"clientId": ...}}.
  const result = await preparedQuery<{ client_id: string; run_id: string | null }>(
    db,
    `SELECT DISTINCT ON (m.body #>> '{user,clientId}') m.body #>> '{user,clientId}' AS client_id, v.run_id
       FROM messages m
       JOIN revisions v ON v.conversation_id = m.conversation_id AND m.id = ANY (v.message_ids)
       LEFT JOIN runs r ON r.id = v.run_id
      WHERE m.conversation_id = $1
        AND m.body #>> '{user,clientId}' = ANY ($2::text[])
        AND (v.run_id IS NULL OR r.status IN ('running', 'completed'))
      ORDER BY m.body #>> '{user,clientId}', v.created_at`,
    [conversationId, [...clientIds]],
  );
  return new Map(result.rows.map((row) => [row.client_id, row.run_id ?? IMPORTED_HOLDER]));
}
