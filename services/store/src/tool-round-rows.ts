/** The tool_rounds and tool_results tables: row shapes and reads. */
import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { AssistantMessageSchema, ToolCallPartSchema, type AssistantMessage, type ToolCallPart } from "@byok/contracts";
import { preparedQuery, together, type Queryable, type Transaction } from "./database.ts";

export interface ToolResultRow {
  readonly callId: string;
  readonly completionSeq: number;
  readonly content: string;
  readonly isError: boolean;
  readonly revisionId: string;
}

export interface ToolRoundRow {
  readonly runId: string;
  readonly id: string;
  readonly baseRevisionId: string | null;
  readonly assistant: AssistantMessage;
  readonly calls: ToolCallPart[];
  readonly providerCallIndex: number;
  readonly settled: boolean;
  readonly version: number;
  /** Committed results in completion order. */
  readonly results: ToolResultRow[];
}

/** Revision after the round's last committed pair (its base when none). */
export function roundTip(round: ToolRoundRow): string | null {
  const last = round.results[round.results.length - 1];
  return last ? last.revisionId : round.baseRevisionId;
}

interface RoundDbRow {
  run_id: string;
  id: string;
  base_revision_id: string | null;
  assistant: JsonValue;
  calls: JsonValue[];
  provider_call_index: number;
  status: "open" | "settled";
  version: number;
}

interface ResultDbRow {
  call_id: string;
  completion_seq: number;
  content: string;
  is_error: boolean;
  revision_id: string;
}

const ROUND_COLUMNS = "run_id, id, base_revision_id, assistant, calls, provider_call_index, status, version";

const RESULT_COLUMNS = "call_id, completion_seq, content, is_error, revision_id";

function roundFromDb(row: RoundDbRow, results: readonly ResultDbRow[]): ToolRoundRow {
  return {
    runId: row.run_id,
    id: row.id,
    baseRevisionId: row.base_revision_id,
    assistant: fromJson(AssistantMessageSchema, row.assistant),
    calls: row.calls.map((c) => fromJson(ToolCallPartSchema, c)),
    providerCallIndex: row.provider_call_index,
    settled: row.status === "settled",
    version: row.version,
    results: results.map((r) => ({
      callId: r.call_id,
      completionSeq: r.completion_seq,
      content: r.content,
      isError: r.is_error,
      revisionId: r.revision_id,
    })),
  };
}

/**
 * A round (`where` over tool_rounds, parameters `values`) with its results.
 * Unlocked: one statement, one snapshot for both. Locked (`FOR UPDATE`, `FOR
 * SHARE`): the results are read by a statement of their own issued behind the
 * round's (one round trip for both), so they are those of the round as locked;
 * a subquery of the locking statement would read them from before its wait.
 */
async function roundWithResults(db: Queryable, where: string, values: unknown[], lock: "" | " FOR UPDATE" | " FOR SHARE"): Promise<ToolRoundRow | undefined> {
  if (lock === "") {
    const result = await preparedQuery<RoundDbRow & { results: ResultDbRow[] | null }>(
      db,
      `SELECT ${ROUND_COLUMNS}, (SELECT json_agg(json_build_object('call_id', t.call_id, 'completion_seq', t.completion_seq, 'content', t.content,
                'is_error', t.is_error, 'revision_id', t.revision_id) ORDER BY t.completion_seq)
              FROM tool_results t WHERE t.run_id = tool_rounds.run_id AND t.round_id = tool_rounds.id) AS results
         FROM tool_rounds WHERE ${where}`,
      values,
    );
    const row = result.rows[0];
    return row ? roundFromDb(row, row.results ?? []) : undefined;
  }
  const [rounds, results] = await together(
    preparedQuery<RoundDbRow>(db, `SELECT ${ROUND_COLUMNS} FROM tool_rounds WHERE ${where}${lock}`, values),
    preparedQuery<ResultDbRow>(
      db,
      `SELECT ${RESULT_COLUMNS} FROM tool_results WHERE run_id = $1 AND round_id = (SELECT id FROM tool_rounds WHERE ${where}) ORDER BY completion_seq`,
      values,
    ),
  );
  const row = rounds.rows[0];
  return row ? roundFromDb(row, results.rows) : undefined;
}

export function findRound(db: Queryable, runId: string, roundId: string, lock: "lock" | "no-lock" = "no-lock"): Promise<ToolRoundRow | undefined> {
  return roundWithResults(db, "run_id = $1 AND id = $2", [runId, roundId], lock === "lock" ? " FOR UPDATE" : "");
}

export function findRoundByCallIndex(db: Queryable, runId: string, providerCallIndex: number): Promise<ToolRoundRow | undefined> {
  return roundWithResults(db, "run_id = $1 AND provider_call_index = $2", [runId, providerCallIndex], "");
}

/** `share` waits for a result commit in progress, so version and results are read consistently. */
export function findOpenRound(db: Queryable, runId: string, lock: "share" | "no-lock" = "no-lock"): Promise<ToolRoundRow | undefined> {
  return roundWithResults(db, "run_id = $1 AND status = 'open'", [runId], lock === "share" ? " FOR SHARE" : "");
}

export interface NewToolRound {
  readonly runId: string;
  readonly id: string;
  readonly baseRevisionId: string | null;
  readonly assistant: AssistantMessage;
  readonly calls: readonly ToolCallPart[];
  readonly providerCallIndex: number;
}

export async function insertRound(tx: Transaction, round: NewToolRound): Promise<ToolRoundRow> {
  await preparedQuery(
    tx,
    `INSERT INTO tool_rounds (run_id, id, base_revision_id, assistant, calls, provider_call_index, status, version)
     VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, 'open', 1)`,
    [
      round.runId,
      round.id,
      round.baseRevisionId,
      JSON.stringify(toJson(AssistantMessageSchema, round.assistant)),
      JSON.stringify(round.calls.map((c) => toJson(ToolCallPartSchema, c))),
      round.providerCallIndex,
    ],
  );
  return { ...round, calls: [...round.calls], settled: false, version: 1, results: [] };
}

export interface NewToolResult extends ToolResultRow {
  readonly runId: string;
  readonly roundId: string;
}

/** Inserts the result and bumps the round version (settling it when `settles`); returns the new version. */
/**
 * Inserts the result and bumps the round version (settling it when `settles`); returns the new version.
 * Both statements are issued at once (one round trip).
 */
export async function insertResult(tx: Transaction, result: NewToolResult, settles: boolean): Promise<number> {
  const [, updated] = await together(
    preparedQuery(
      tx,
      `INSERT INTO tool_results (run_id, round_id, call_id, completion_seq, content, is_error, revision_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [result.runId, result.roundId, result.callId, result.completionSeq, result.content, result.isError, result.revisionId],
    ),
    preparedQuery<{ version: number }>(
      tx,
      `UPDATE tool_rounds SET version = version + 1,
            status = CASE WHEN $3::boolean THEN 'settled' ELSE status END,
            settled_at = CASE WHEN $3::boolean THEN now() ELSE settled_at END
      WHERE run_id = $1 AND id = $2 RETURNING version`,
      [result.runId, result.roundId, settles],
    ),
  );
  return (updated.rows[0] as { version: number }).version;
}

/**
 * A result committed by some run of the conversation (the first one) for the
 * call `call.callId` whose round recorded the same tool name and arguments, if any.
 */
export async function findCommittedResult(
  db: Queryable,
  conversationId: string,
  call: { callId: string; name: string; argumentsJson: string },
): Promise<{ content: string; isError: boolean; runId: string } | undefined> {
  // tool_rounds.calls holds the calls as protobuf JSON of ToolCallPart (callId, name, argumentsJson).
  const result = await preparedQuery<{ content: string; is_error: boolean; run_id: string }>(
    db,
    `SELECT tr.content, tr.is_error, tr.run_id
       FROM runs r
       JOIN tool_results tr ON tr.run_id = r.id
       JOIN tool_rounds rd ON rd.run_id = tr.run_id AND rd.id = tr.round_id
      WHERE r.conversation_id = $1 AND tr.call_id = $2
        AND EXISTS (
          SELECT 1 FROM jsonb_array_elements(rd.calls) c
           WHERE c ->> 'callId' = $2 AND c ->> 'name' = $3 AND COALESCE(c ->> 'argumentsJson', '') = $4)
      ORDER BY tr.created_at
      LIMIT 1`,
    [conversationId, call.callId, call.name, call.argumentsJson],
  );
  const row = result.rows[0];
  return row ? { content: row.content, isError: row.is_error, runId: row.run_id } : undefined;
}
