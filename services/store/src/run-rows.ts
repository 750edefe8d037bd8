/** The runs table: row shape, reads and the small updates shared by run operations. */
import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { UsageSchema, type Usage } from "@byok/contracts";
import type { ConversationRow } from "./conversations.ts";
import { preparedQuery, type Queryable, type Transaction } from "./database.ts";
import { APPEND_CTES, type PreparedAppend } from "./revisions.ts";

export type RunState = "running" | "completed" | "cancelled" | "failed";
export type TerminalRunState = Exclude<RunState, "running">;
export type RunFailureKind = "protocol" | "provider" | "store" | "client" | "over_limit";

export interface RunRow {
  readonly id: string;
  readonly conversationId: string;
  readonly memberId: string;
  readonly parentRunId: string;
  readonly parentToolCallId: string;
  readonly modelId: string;
  readonly status: RunState;
  readonly failureKind: RunFailureKind | null;
  readonly failureMessage: string;
  readonly usage: Usage | undefined;
  readonly providerCallIndex: number;
  readonly startRevisionId: string | null;
  readonly headRevisionId: string | null;
  readonly beginCount: number;
}

export interface RunDbRow {
  id: string;
  conversation_id: string;
  member_id: string;
  parent_run_id: string | null;
  parent_tool_call_id: string | null;
  model_id: string;
  status: RunState;
  failure_kind: RunFailureKind | null;
  failure_message: string | null;
  usage: JsonValue | null;
  provider_call_index: number;
  start_revision_id: string | null;
  head_revision_id: string | null;
  begin_count: number;
}

export function runFromDb(row: RunDbRow): RunRow {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    memberId: row.member_id,
    parentRunId: row.parent_run_id ?? "",
    parentToolCallId: row.parent_tool_call_id ?? "",
    modelId: row.model_id,
    status: row.status,
    failureKind: row.failure_kind,
    failureMessage: row.failure_message ?? "",
    usage: row.usage === null ? undefined : fromJson(UsageSchema, row.usage),
    providerCallIndex: row.provider_call_index,
    startRevisionId: row.start_revision_id,
    headRevisionId: row.head_revision_id,
    beginCount: row.begin_count,
  };
}

export function usageToJson(usage: Usage | undefined): string | null {
  return usage === undefined ? null : JSON.stringify(toJson(UsageSchema, usage));
}

export const RUN_COLUMNS = `id, conversation_id, member_id, parent_run_id, parent_tool_call_id, model_id, status, failure_kind,
  failure_message, usage, provider_call_index, start_revision_id, head_revision_id, begin_count`;

export async function findRun(db: Queryable, runId: string, lock: "lock" | "no-lock" = "no-lock"): Promise<RunRow | undefined> {
  const result = await preparedQuery<RunDbRow>(db, `SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1${lock === "lock" ? " FOR UPDATE" : ""}`, [runId]);
  const row = result.rows[0];
  return row ? runFromDb(row) : undefined;
}

/** Counts one more run.begin for an existing run and returns it; undefined when the run does not exist. */
export async function countRepeatedBegin(tx: Transaction, runId: string): Promise<RunRow | undefined> {
  const result = await preparedQuery<RunDbRow>(tx, `UPDATE runs SET begin_count = begin_count + 1, updated_at = now() WHERE id = $1 RETURNING ${RUN_COLUMNS}`, [runId]);
  const row = result.rows[0];
  return row ? runFromDb(row) : undefined;
}

/**
 * After createOrLockConversation: counts a repeated begin of `runId` and reads
 * the (locked) conversation in one statement. A statement after the lock, so it
 * sees a first begin of the same run that committed while this one waited.
 * `contentPurged`: the retention job has deleted the conversation's content.
 */
export async function countRepeatedBeginWithConversation(
  tx: Transaction,
  runId: string,
  conversationId: string,
): Promise<{ readonly run: RunRow | undefined; readonly conversation: ConversationRow | undefined; readonly contentPurged: boolean }> {
  const result = await preparedQuery<
    RunDbRow & { c_id: string; c_member_id: string; c_head_revision_id: string | null; c_active_run_id: string | null; c_purged: boolean; counted: boolean }
  >(
    tx,
    `WITH counted AS (UPDATE runs SET begin_count = begin_count + 1, updated_at = now() WHERE id = $1 RETURNING ${RUN_COLUMNS})
     SELECT c.id AS c_id, c.member_id AS c_member_id, c.head_revision_id AS c_head_revision_id, c.active_run_id AS c_active_run_id,
            c.content_purged_at IS NOT NULL AS c_purged, counted.id IS NOT NULL AS counted, counted.*
       FROM conversations c LEFT JOIN counted ON true WHERE c.id = $2`,
    [runId, conversationId],
  );
  const row = result.rows[0];
  if (!row) return { run: undefined, conversation: undefined, contentPurged: false };
  const conversation: ConversationRow = { id: row.c_id, memberId: row.c_member_id, headRevisionId: row.c_head_revision_id, activeRunId: row.c_active_run_id };
  return { run: row.counted ? runFromDb(row) : undefined, conversation, contentPurged: row.c_purged };
}

/** What a new run row is inserted with (head = start revision). */
export type NewRun = Pick<RunRow, "id" | "conversationId" | "memberId" | "parentRunId" | "parentToolCallId" | "modelId" | "startRevisionId">;

/** `status` running (a run that starts) or completed (a repeated start that does nothing; finished at once). */
export async function insertRun(tx: Transaction, run: NewRun, status: "running" | "completed" = "running"): Promise<RunRow> {
  const result = await preparedQuery<RunDbRow>(
    tx,
    `INSERT INTO runs (id, conversation_id, member_id, parent_run_id, parent_tool_call_id, model_id, status, start_revision_id, head_revision_id, finished_at)
     VALUES ($1, $2, $3, NULLIF($4, ''), NULLIF($5, ''), $6, $8, $7, $7, CASE WHEN $8 = 'running' THEN NULL ELSE now() END) RETURNING ${RUN_COLUMNS}`,
    [run.id, run.conversationId, run.memberId, run.parentRunId, run.parentToolCallId, run.modelId, run.startRevisionId, status],
  );
  return runFromDb(result.rows[0] as RunDbRow);
}

/**
 * Inserts a running run that takes its conversation over (the caller holds the
 * conversation lock): the conversation's active run and head are set in the
 * same statement. The run starts at `start`: an existing revision, or an
 * append not written yet (the run's initial messages), which the same
 * statement writes: one round trip for what run.begin writes.
 */
export async function insertActiveRun(tx: Transaction, run: Omit<NewRun, "startRevisionId">, start: PreparedAppend | { readonly revisionId: string | null }): Promise<RunRow> {
  if ("values" in start) {
    const result = await preparedQuery<RunDbRow>(
      tx,
      `WITH ${APPEND_CTES},
       takeover AS (UPDATE conversations SET active_run_id = $11, head_revision_id = $1, updated_at = now() WHERE id = $12)
       INSERT INTO runs (id, conversation_id, member_id, parent_run_id, parent_tool_call_id, model_id, status, start_revision_id, head_revision_id)
       VALUES ($11, $12, $13, NULLIF($14, ''), NULLIF($15, ''), $16, 'running', $1, $1) RETURNING ${RUN_COLUMNS}`,
      [...start.values, run.id, run.conversationId, run.memberId, run.parentRunId, run.parentToolCallId, run.modelId],
    );
    return runFromDb(result.rows[0] as RunDbRow);
  }
  const result = await preparedQuery<RunDbRow>(
    tx,
    `WITH takeover AS (UPDATE conversations SET active_run_id = $1, head_revision_id = $7, updated_at = now() WHERE id = $2)
     INSERT INTO runs (id, conversation_id, member_id, parent_run_id, parent_tool_call_id, model_id, status, start_revision_id, head_revision_id)
     VALUES ($1, $2, $3, NULLIF($4, ''), NULLIF($5, ''), $6, 'running', $7, $7) RETURNING ${RUN_COLUMNS}`,
    [run.id, run.conversationId, run.memberId, run.parentRunId, run.parentToolCallId, run.modelId, start.revisionId],
  );
  return runFromDb(result.rows[0] as RunDbRow);
}

/** The sub-agent runs `parentRunId` started, oldest first. */
export async function findChildRuns(db: Queryable, parentRunId: string): Promise<RunRow[]> {
  const result = await preparedQuery<RunDbRow>(db, `SELECT ${RUN_COLUMNS} FROM runs WHERE parent_run_id = $1 ORDER BY created_at, id`, [parentRunId]);
  return result.rows.map(runFromDb);
}

export interface RunTermination {
  readonly status: TerminalRunState;
  readonly failureKind: RunFailureKind | null;
  readonly failureMessage: string;
  /** Undefined keeps the usage recorded so far. */
  readonly usage: Usage | undefined;
}

/**
 * Ends the run. With `releaseConversationId` (the run is that conversation's
 * active run, locked by the caller) the conversation's active run is cleared in
 * the same statement.
 */
export async function terminateRun(tx: Transaction, runId: string, end: RunTermination, releaseConversationId?: string): Promise<RunRow> {
  const result = await preparedQuery<RunDbRow>(
    tx,
    `WITH released AS (
       UPDATE conversations SET active_run_id = NULL, updated_at = now() WHERE $6::text IS NOT NULL AND id = $6::text AND active_run_id = $1
     )
     UPDATE runs SET status = $2, failure_kind = $3, failure_message = NULLIF($4, ''), usage = COALESCE($5::jsonb, usage),
            finished_at = now(), updated_at = now()
      WHERE id = $1 RETURNING ${RUN_COLUMNS}`,
    [runId, end.status, end.failureKind, end.failureMessage, usageToJson(end.usage), releaseConversationId ?? null],
  );
  return runFromDb(result.rows[0] as RunDbRow);
}

/**
 * Cancels `runId` when it is still running: superseded by `byRunId`, which takes
 * its conversation over (the caller holds that conversation's lock). True when
 * it was running.
 */
export async function supersedeRun(tx: Transaction, runId: string, byRunId: string): Promise<boolean> {
  const result = await preparedQuery(
    tx,
    `UPDATE runs SET status = 'cancelled', failure_kind = NULL, failure_message = $2, finished_at = now(), updated_at = now()
      WHERE id = $1 AND status = 'running'`,
    [runId, `superseded by run ${byRunId}`],
  );
  return (result.rowCount ?? 0) > 0;
}

/** A context anchor to record with a head move (context-anchors.ts; first measurement wins). */
export interface HeadMoveAnchor {
  /** The measured revision (the head the model call was built from). */
  readonly revisionId: string;
  readonly messageCount: number;
  readonly inputTokens: bigint;
}

/**
 * The run moves its conversation's head to `headRevisionId` (the caller holds the
 * conversation lock): the conversation's head and the run's head (and which model
 * call it came from) in one statement, with the call's context anchor if given.
 */
export async function moveRunHead(
  tx: Transaction,
  conversationId: string,
  runId: string,
  headRevisionId: string,
  providerCallIndex: number,
  anchor?: HeadMoveAnchor,
): Promise<void> {
  const move = headMoveStatement(0);
  await preparedQuery(tx, `WITH ${move.ctes} ${move.update}`, headMoveParams({ conversationId, runId, headRevisionId, providerCallIndex, anchor }));
}

/** A head move (moveRunHead), to ride on another statement of the same transaction. */
export interface HeadMove {
  readonly conversationId: string;
  readonly runId: string;
  readonly headRevisionId: string;
  readonly providerCallIndex: number;
  readonly anchor?: HeadMoveAnchor | undefined;
}

/**
 * The head move as SQL whose parameters start after `$<offset>`: `ctes` (the
 * conversation's head, the context anchor) to join a WITH list, and `update`
 * (the run's head), the statement's main part. Its parameters are headMoveParams.
 */
export function headMoveStatement(offset: number): { readonly ctes: string; readonly update: string } {
  const p = (n: number): string => `$${offset + n}`;
  return {
    ctes: `head AS (UPDATE conversations SET head_revision_id = ${p(2)}, updated_at = now() WHERE id = ${p(4)}),
          anchor AS (
            INSERT INTO context_anchors (revision_id, message_count, input_tokens, run_id, provider_call_index)
            SELECT ${p(5)}::uuid, ${p(6)}::integer, ${p(7)}::bigint, ${p(1)}, ${p(3)} WHERE ${p(5)}::uuid IS NOT NULL
            ON CONFLICT (revision_id) DO NOTHING
          )`,
    update: `UPDATE runs SET head_revision_id = ${p(2)}, provider_call_index = GREATEST(provider_call_index, ${p(3)}), updated_at = now() WHERE id = ${p(1)}`,
  };
}

export function headMoveParams(move: HeadMove): unknown[] {
  const { anchor } = move;
  return [move.runId, move.headRevisionId, move.providerCallIndex, move.conversationId, anchor?.revisionId ?? null, anchor?.messageCount ?? null, anchor?.inputTokens.toString() ?? null];
}

/**
 * A run's append (revisions.ts prepareAppend) and its head move onto the new revision, in one
 * statement: one round trip instead of two. The foreign keys to the new revision are checked at the
 * statement's end, when its row exists.
 */
export async function appendMovingRunHead(tx: Transaction, append: PreparedAppend, move: Omit<HeadMove, "headRevisionId">): Promise<void> {
  const head = headMoveStatement(append.values.length);
  await preparedQuery(tx, `WITH ${APPEND_CTES}, ${head.ctes} ${head.update}`, [...append.values, ...headMoveParams({ ...move, headRevisionId: append.revision.id })]);
}

/** Records the highest model call index the run has used (tool rounds do not move the head). */
export async function recordProviderCallIndex(tx: Transaction, runId: string, providerCallIndex: number): Promise<void> {
  await preparedQuery(tx, "UPDATE runs SET provider_call_index = GREATEST(provider_call_index, $2), updated_at = now() WHERE id = $1", [runId, providerCallIndex]);
}
