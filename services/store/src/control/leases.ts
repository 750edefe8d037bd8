/**
 * Leases: slices of a counter window's allowance that one provider gateway
 * replica admits calls against without asking the store each time.
 *
 * Exposure of a window = committed (settled) + the unconsumed part of its live
 * leases. A grant happens only while exposure < limit, so the replicas
 * together never hold more than is left. A grant is at least the asker's
 * `need` (or nothing), at most `want`, and at most a quarter of what is left
 * (rounded up), so that near the limit no replica sits on a large unused slice.
 * With `overdraft`, a window with something left but less than `need` still
 * grants `need`: that grant is the only one that can take exposure past the
 * limit (afterwards nothing is left), by less than one call's need.
 *
 * A lease is void after `expires_at` unless renewed.
 *
 * Budget leases are charged call by call (accounting.settle adds each call's
 * charge to the lease's `consumed` and to the window's `committed`), so an
 * expired budget lease gives back exactly its unconsumed part: a crashed
 * replica's slice of a day or month comes back after the TTL. Rate leases
 * (one minute) are not written per call: the replica counts them itself and
 * says, when it returns or closes a lease, how much of it it used (`keep`),
 * which then moves into `committed`. A rate lease that expires counts as used
 * in full for the rest of its minute (the store cannot know less), which is
 * the safe side for a window that ends within 60 s anyway.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { inTransaction, query, type Queryable } from "../database.ts";
import { ok, type Outcome } from "../outcome.ts";
import { counterTerms, lockCounter, type CounterRef, type CounterTerms } from "./counters.ts";
import { isUuid } from "./uuid.ts";
import type { TimeWindow } from "./windows.ts";

/** The largest share of what is left one grant may take: 1 / FAIR_SHARE (rounded up). */
const FAIR_SHARE = 4n;
/** Rate windows (minutes) are kept this long after they end, then deleted. */
const RATE_WINDOW_KEEP_MS = 3_600_000;

export interface LeaseAskInput {
  readonly ref: CounterRef;
  /** The replica's lease on this counter ("" = none). */
  readonly leaseId: string;
  readonly need: bigint;
  readonly want: bigint;
  readonly overdraft: boolean;
}

export interface LeaseGrantRow {
  /** "" when refused and the asker had no lease. */
  readonly leaseId: string;
  readonly granted: bigint;
  readonly amount: bigint;
  readonly consumed: bigint;
  readonly window: TimeWindow;
  readonly expiresAt: Date;
}

/** The grant rule (see the module comment); pure. */
export function grantSize(available: bigint, need: bigint, want: bigint, overdraft: boolean): bigint {
  const wanted = want > need ? want : need;
  if (available >= need && available > 0n) {
    const share = (available + FAIR_SHARE - 1n) / FAIR_SHARE;
    const capped = wanted < share ? wanted : share;
    const size = capped > need ? capped : need;
    return size < available ? size : available;
  }
  return overdraft && available > 0n ? need : 0n;
}

interface LeaseDbRow {
  id: string;
  amount: string;
  consumed: string;
}

/** Budget leases are charged per call; rate leases only when returned (see the module comment). */
function isRateCounter(key: string): boolean {
  return !key.startsWith("budget:");
}

async function grantOne(db: Queryable, holder: string, ask: LeaseAskInput, terms: CounterTerms, now: Date, ttlMs: number): Promise<LeaseGrantRow> {
  const { key, window } = terms;
  let committed = await lockCounter(db, terms);
  const expired = await query<{ unconsumed: string | null }>(
    db,
    `WITH gone AS (DELETE FROM accounting_leases WHERE counter = $1 AND window_start = $2 AND expires_at <= $3 RETURNING amount, consumed)
     SELECT sum(greatest(amount - consumed, 0)) AS unconsumed FROM gone`,
    [key, window.start, now],
  );
  const lapsed = BigInt(expired.rows[0]?.unconsumed ?? "0");
  if (isRateCounter(key) && lapsed > 0n) {
    await query(db, "UPDATE accounting_counters SET committed = committed + $3 WHERE counter = $1 AND window_start = $2", [key, window.start, lapsed.toString()]);
    committed += lapsed;
  }
  const outstanding = await query<{ outstanding: string }>(
    db,
    "SELECT coalesce(sum(greatest(amount - consumed, 0)), 0) AS outstanding FROM accounting_leases WHERE counter = $1 AND window_start = $2",
    [key, window.start],
  );
  const wanted = ask.want > ask.need ? ask.want : ask.need;
  const available = terms.limit === undefined ? wanted : terms.limit - committed - BigInt(outstanding.rows[0]?.outstanding ?? "0");
  const granted = grantSize(available, ask.need, ask.want, ask.overdraft);
  const expiresAt = new Date(now.getTime() + ttlMs);

  const existing = isUuid(ask.leaseId)
    ? (await query<LeaseDbRow>(db, "SELECT id, amount, consumed FROM accounting_leases WHERE id = $1 AND counter = $2 AND window_start = $3 FOR UPDATE", [ask.leaseId, key, window.start])).rows[0]
    : undefined;
  if (existing) {
    const updated = await query<LeaseDbRow>(db, "UPDATE accounting_leases SET amount = amount + $2, expires_at = $3, holder = $4 WHERE id = $1 RETURNING id, amount, consumed", [
      existing.id,
      granted.toString(),
      expiresAt,
      holder,
    ]);
    const row = updated.rows[0] as LeaseDbRow;
    return { leaseId: row.id, granted, amount: BigInt(row.amount), consumed: BigInt(row.consumed), window, expiresAt };
  }
  if (granted === 0n) return { leaseId: "", granted, amount: 0n, consumed: 0n, window, expiresAt };
  const id = randomUUID();
  await query(db, "INSERT INTO accounting_leases (id, counter, window_start, holder, amount, granted_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)", [
    id,
    key,
    window.start,
    holder,
    granted.toString(),
    now,
    expiresAt,
  ]);
  return { leaseId: id, granted, amount: granted, consumed: 0n, window, expiresAt };
}

/**
 * One grant per ask, in the order asked, each in its own transaction (a
 * refused ask does not undo the others); the asks of one request name
 * different counters and run side by side.
 */
export async function acquireLeases(pool: pg.Pool, holder: string, asks: readonly LeaseAskInput[], now: Date, ttlMs: number): Promise<Outcome<LeaseGrantRow[]>> {
  const outcomes = await Promise.all(
    asks.map((ask) =>
      inTransaction(pool, async (tx) => {
        const terms = await counterTerms(tx, ask.ref, now);
        if (terms.kind !== "ok") return terms;
        return ok(await grantOne(tx, holder, ask, terms.value, now, ttlMs));
      }),
    ),
  );
  const grants: LeaseGrantRow[] = [];
  for (const outcome of outcomes) {
    if (outcome.kind !== "ok") return outcome;
    grants.push(outcome.value);
  }
  return ok(grants);
}

export interface LeaseReturnInput {
  readonly leaseId: string;
  /** Units of the lease the replica used or still holds (consumed + reserved); the rest goes back. */
  readonly keep: bigint;
  /** The lease ends: what it used (`keep`, beyond what settles charged already) stays committed. */
  readonly close: boolean;
}

async function closeLease(tx: Queryable, leaseId: string, keep: bigint): Promise<void> {
  const gone = await query<{ counter: string; window_start: Date; amount: string; consumed: string }>(
    tx,
    "DELETE FROM accounting_leases WHERE id = $1 RETURNING counter, window_start, amount, consumed",
    [leaseId],
  );
  const lease = gone.rows[0];
  if (!lease) return;
  const amount = BigInt(lease.amount);
  const used = (keep < amount ? keep : amount) - BigInt(lease.consumed);
  if (used > 0n) await query(tx, "UPDATE accounting_counters SET committed = committed + $3 WHERE counter = $1 AND window_start = $2", [lease.counter, lease.window_start, used.toString()]);
}

/**
 * Shrinks or closes leases (a lease never shrinks below what was consumed),
 * renews `renew`, and tidies up expired leases (see the module comment) and
 * old rate windows. Returns the renew ids that are gone.
 */
export async function releaseLeases(pool: pg.Pool, returns: readonly LeaseReturnInput[], renew: readonly string[], now: Date, ttlMs: number): Promise<Outcome<string[]>> {
  for (const r of returns) {
    if (!isUuid(r.leaseId)) continue;
    if (r.close) await inTransaction(pool, async (tx) => ok(await closeLease(tx, r.leaseId, r.keep)));
    else await query(pool, "UPDATE accounting_leases SET amount = greatest(consumed, least(amount, $2)) WHERE id = $1", [r.leaseId, r.keep.toString()]);
  }
  const ids = renew.filter(isUuid);
  const renewed = new Set<string>();
  if (ids.length > 0) {
    const result = await query<{ id: string }>(pool, "UPDATE accounting_leases SET expires_at = $2 WHERE id = ANY($1::uuid[]) AND expires_at > $3 RETURNING id", [
      ids,
      new Date(now.getTime() + ttlMs),
      now,
    ]);
    for (const row of result.rows) renewed.add(row.id);
  }
  await query(
    pool,
    `WITH gone AS (DELETE FROM accounting_leases WHERE expires_at <= $1 RETURNING counter, window_start, amount, consumed),
          lapsed AS (SELECT counter, window_start, sum(greatest(amount - consumed, 0)) AS units FROM gone WHERE counter NOT LIKE 'budget:%' GROUP BY 1, 2)
     UPDATE accounting_counters c SET committed = c.committed + lapsed.units FROM lapsed WHERE c.counter = lapsed.counter AND c.window_start = lapsed.window_start`,
    [now],
  );
  await query(pool, "DELETE FROM accounting_counters WHERE window_end < $1 AND counter NOT LIKE 'budget:%'", [new Date(now.getTime() - RATE_WINDOW_KEEP_MS)]);
  return ok(renew.filter((id) => !renewed.has(id)));
}
