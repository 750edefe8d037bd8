/**
 * The conditions of every history write: the writing run is the conversation's
 * active run and the conversation head is where the writer expects it. The
 * conversation row is locked first, then the run: one lock order for all writes.
 */
import type { ConversationRow } from "./conversations.ts";
import { preparedQuery, type Transaction } from "./database.ts";
import { ok, reject, type Outcome, type Rejection } from "./outcome.ts";
import { findRun, RUN_COLUMNS, runFromDb, type RunDbRow, type RunRow } from "./run-rows.ts";

export interface LockedWriter {
  readonly run: RunRow;
  readonly conversation: ConversationRow;
}

const RUN_SELECT = RUN_COLUMNS.split(",")
  .map((column) => `r.${column.trim()}`)
  .join(", ");

/**
 * Both locks in one statement: FOR UPDATE OF c, r locks each joined row's
 * conversation, then its run (the lock order of every write), and returns the
 * rows as they are once locked.
 */
const LOCK_WRITER = `SELECT c.id AS c_id, c.member_id AS c_member_id, c.head_revision_id AS c_head_revision_id, c.active_run_id AS c_active_run_id, ${RUN_SELECT}
  FROM runs r JOIN conversations c ON c.id = r.conversation_id WHERE r.id = $1 FOR UPDATE OF c, r`;

interface WriterDbRow extends RunDbRow {
  c_id: string;
  c_member_id: string;
  c_head_revision_id: string | null;
  c_active_run_id: string | null;
}

export async function lockRunConversation(tx: Transaction, runId: string): Promise<Outcome<LockedWriter>> {
  if (runId === "") return reject("invalid", "run_id is required");
  const row = (await preparedQuery<WriterDbRow>(tx, LOCK_WRITER, [runId])).rows[0];
  if (!row) {
    const unlocked = await findRun(tx, runId);
    if (!unlocked) return reject("not_found", `run ${runId} not found`);
    throw new Error(`run ${runId} references missing conversation ${unlocked.conversationId}`);
  }
  const conversation: ConversationRow = { id: row.c_id, memberId: row.c_member_id, headRevisionId: row.c_head_revision_id, activeRunId: row.c_active_run_id };
  return ok({ run: runFromDb(row), conversation });
}

/** Why `runId` may not write onto `expectedHead` now; undefined when it may. */
export function writeRejection(conversation: ConversationRow, runId: string, expectedHead: string): Rejection | undefined {
  if (conversation.activeRunId !== runId) return { kind: "not_active", message: `run ${runId} is not the active run of conversation ${conversation.id}` };
  const head = conversation.headRevisionId ?? "";
  if (head !== expectedHead) return { kind: "head_mismatch", message: `conversation head is ${head || "(empty)"}, expected ${expectedHead || "(empty)"}` };
  return undefined;
}
