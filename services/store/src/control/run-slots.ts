/**
 * accounting.run_slot and accounting.request_slot: the concurrent-run limit,
 * counted where runs are known to run. A run takes one of its member's slots
 * (before its first model call); a slot counts while its run's status is
 * `running`. A request of the HTTP front (one model call) takes a slot of the
 * same limit, held by its provider-gateway replica until the call ends
 * (released) or the replica stops renewing it (lapsed). Taking a slot locks
 * the member's limits row, so two replicas admitting two calls of the same
 * member at once are decided one after the other: the limit holds exactly.
 * Idempotent per run / request.
 */
import type pg from "pg";
import { inTransaction, query, type Transaction } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { isUuid } from "./uuid.ts";

export interface RunSlot {
  readonly admitted: boolean;
  /** undefined = no limit. */
  readonly limit: number | undefined;
  readonly running: number;
}

const NO_LIMIT: RunSlot = { admitted: true, limit: undefined, running: 0 };

/** The member's concurrent-run limit, with its limits row locked; undefined = none. */
async function lockedLimit(tx: Transaction, memberId: string): Promise<number | undefined> {
  const limits = await query<{ concurrent_runs: number | null }>(tx, "SELECT concurrent_runs FROM member_limits WHERE member_id = $1 FOR UPDATE", [memberId]);
  return limits.rows[0]?.concurrent_runs ?? undefined;
}

/** Slots held now (runs running, requests not lapsed), after dropping the others while the member is locked. */
async function heldSlots(tx: Transaction, memberId: string, now: Date): Promise<number> {
  await query(tx, "DELETE FROM run_slots s USING runs r WHERE s.run_id = r.id AND s.member_id = $1 AND r.status <> 'running'", [memberId]);
  await query(tx, "DELETE FROM request_slots WHERE member_id = $1 AND expires_at <= $2", [memberId, now]);
  const counted = await query<{ n: string }>(
    tx,
    "SELECT (SELECT count(*) FROM run_slots WHERE member_id = $1) + (SELECT count(*) FROM request_slots WHERE member_id = $1) AS n",
    [memberId],
  );
  return Number(counted.rows[0]?.n ?? 0);
}

export function takeRunSlot(pool: pg.Pool, runId: string, memberId: string, now: Date): Promise<Outcome<RunSlot>> {
  return inTransaction(pool, async (tx) => {
    const run = await query<{ member_id: string }>(tx, "SELECT member_id FROM runs WHERE id = $1", [runId]);
    const owner = run.rows[0];
    if (!owner) return reject("not_found", `run ${runId} not found`);
    if (owner.member_id !== memberId) return reject("forbidden", `run ${runId} belongs to another member`);
    if (!isUuid(memberId)) return ok(NO_LIMIT);
    const limit = await lockedLimit(tx, memberId);
    if (limit === undefined) return ok(NO_LIMIT);
    const running = await heldSlots(tx, memberId, now);
    const held = await query(tx, "SELECT 1 FROM run_slots WHERE run_id = $1", [runId]);
    if ((held.rowCount ?? 0) > 0) return ok({ admitted: true, limit, running });
    if (running >= limit) return ok({ admitted: false, limit, running });
    await query(tx, "INSERT INTO run_slots (run_id, member_id) VALUES ($1, $2)", [runId, memberId]);
    return ok({ admitted: true, limit, running: running + 1 });
  });
}

export interface RequestSlotInput {
  readonly requestId: string;
  readonly memberId: string;
  readonly holder: string;
  readonly ttlMs: number;
}

export function takeRequestSlot(pool: pg.Pool, input: RequestSlotInput, now: Date): Promise<Outcome<RunSlot>> {
  if (input.requestId === "") return Promise.resolve(reject("invalid", "request_id is required"));
  if (input.holder === "") return Promise.resolve(reject("invalid", "holder is required"));
  if (input.ttlMs <= 0) return Promise.resolve(reject("invalid", "ttl_ms must be positive"));
  return inTransaction(pool, async (tx) => {
    if (!isUuid(input.memberId)) return ok(NO_LIMIT);
    const limit = await lockedLimit(tx, input.memberId);
    if (limit === undefined) return ok(NO_LIMIT);
    const running = await heldSlots(tx, input.memberId, now);
    const held = await query<{ member_id: string }>(tx, "SELECT member_id FROM request_slots WHERE request_id = $1", [input.requestId]);
    const holder = held.rows[0];
    if (holder !== undefined) {
      return holder.member_id === input.memberId ? ok({ admitted: true, limit, running }) : reject("forbidden", `request ${input.requestId} belongs to another member`);
    }
    if (running >= limit) return ok({ admitted: false, limit, running });
    await query(tx, "INSERT INTO request_slots (request_id, member_id, holder, expires_at) VALUES ($1, $2, $3, $4)", [
      input.requestId,
      input.memberId,
      input.holder,
      new Date(now.getTime() + input.ttlMs),
    ]);
    return ok({ admitted: true, limit, running: running + 1 });
  });
}

export async function keepRequestSlots(pool: pg.Pool, renew: readonly string[], release: readonly string[], ttlMs: number, now: Date): Promise<Outcome<undefined>> {
  if (renew.length > 0 && ttlMs <= 0) return reject("invalid", "ttl_ms must be positive to renew");
  if (release.length > 0) await query(pool, "DELETE FROM request_slots WHERE request_id = ANY($1::text[])", [release]);
  if (renew.length > 0) await query(pool, "UPDATE request_slots SET expires_at = $2 WHERE request_id = ANY($1::text[])", [renew, new Date(now.getTime() + ttlMs)]);
  return ok(undefined);
}
