/**
 * accounting.run_slot: the concurrent-run limit, counted where runs are known
 * to run. A run takes one of its member's slots (before its first model call);
 * a slot counts while its run's status is `running`. Taking a slot locks the
 * member's limits row, so two replicas admitting two runs of the same member
 * at once are decided one after the other: the limit holds exactly.
 * Idempotent per run.
 */
import type pg from "pg";
import { inTransaction, query } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { isUuid } from "./uuid.ts";

export interface RunSlot {
  readonly admitted: boolean;
  /** undefined = no limit. */
  readonly limit: number | undefined;
  readonly running: number;
}

export function takeRunSlot(pool: pg.Pool, runId: string, memberId: string): Promise<Outcome<RunSlot>> {
  return inTransaction(pool, async (tx) => {
    const run = await query<{ member_id: string }>(tx, "SELECT member_id FROM runs WHERE id = $1", [runId]);
    const owner = run.rows[0];
    if (!owner) return reject("not_found", `run ${runId} not found`);
    if (owner.member_id !== memberId) return reject("forbidden", `run ${runId} belongs to another member`);
    if (!isUuid(memberId)) return ok({ admitted: true, limit: undefined, running: 0 });
    const limits = await query<{ concurrent_runs: number | null }>(tx, "SELECT concurrent_runs FROM member_limits WHERE member_id = $1 FOR UPDATE", [memberId]);
    const limit = limits.rows[0]?.concurrent_runs ?? undefined;
    if (limit === undefined || limit === null) return ok({ admitted: true, limit: undefined, running: 0 });
    // Slots of runs that ended are free; drop them while the member is locked.
    await query(tx, "DELETE FROM run_slots s USING runs r WHERE s.run_id = r.id AND s.member_id = $1 AND r.status <> 'running'", [memberId]);
    const held = await query(tx, "SELECT 1 FROM run_slots WHERE run_id = $1", [runId]);
    const running = Number((await query<{ n: string }>(tx, "SELECT count(*) AS n FROM run_slots WHERE member_id = $1", [memberId])).rows[0]?.n ?? 0);
    if ((held.rowCount ?? 0) > 0) return ok({ admitted: true, limit, running });
    if (running >= limit) return ok({ admitted: false, limit, running });
    await query(tx, "INSERT INTO run_slots (run_id, member_id) VALUES ($1, $2)", [runId, memberId]);
    return ok({ admitted: true, limit, running: running + 1 });
  });
}
