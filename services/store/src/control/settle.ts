/**
 * accounting.settle: one model call into the ledger, and in the same
 * transaction into the counters its limits are enforced on. The call's
 * `charged` amount (its cost, or its reservation when the cost is unknown) is
 * added to every budget of its member, team and model, for the window of its
 * start, and the replica's `charges` to the budget leases it admitted the call
 * on (rate-limit leases are settled by the replica itself, leases.ts).
 * Idempotent by the
 * admission (ticket id); a second admission under the same call reference
 * (the call made again) is the next attempt, its own row.
 */
import type pg from "pg";
import { isClientKind, type ClientKind } from "@byok/contracts";
import { formatUsd } from "@byok/platform";
import { inTransaction, preparedQuery, type Transaction } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { counterKey, upsertCounter } from "./counters.ts";
import { BUDGET_COLUMNS, budgetFromDb, type BudgetRow } from "./budgets.ts";
import { isUuid } from "./uuid.ts";
import { budgetWindow, type TimeWindow } from "./windows.ts";

export type { ClientKind };

export interface LedgerInput {
  readonly callRef: string;
  readonly ticketId: string;
  readonly memberId: string;
  readonly teamId: string;
  readonly clientKind: ClientKind;
  readonly modelId: string;
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly runId: string | null;
  readonly callIndex: number | null;
  readonly requestId: string | null;
  readonly outcome: string;
  readonly tokens: {
    readonly input: bigint | undefined;
    readonly output: bigint | undefined;
    readonly cacheRead: bigint | undefined;
    readonly cacheWrite: bigint | undefined;
    readonly reasoning: bigint | undefined;
  };
  /** Picodollars; undefined = unknown. */
  readonly costPico: bigint | undefined;
  readonly chargedPico: bigint | undefined;
  readonly startedAt: Date;
}

/** What a settled call used on one lease (only budget leases are written per call). */
export interface LeaseChargeInput {
  readonly leaseId: string;
  readonly kind: "budget" | "requests_per_minute" | "tokens_per_minute";
  readonly amount: bigint;
}

function usd(pico: bigint | undefined): string | null {
  return pico === undefined ? null : formatUsd(pico);
}

function check(entry: LedgerInput): string | undefined {
  if (entry.callRef === "") return "call_ref is required";
  if (!isUuid(entry.ticketId)) return "ticket_id must be a uuid";
  if (entry.memberId === "") return "member_id is required";
  if (!isUuid(entry.teamId)) return "team_id must be a team's uuid";
  if (!isClientKind(entry.clientKind)) return `unknown client kind ${JSON.stringify(entry.clientKind)}`;
  if ((entry.runId === null) === (entry.requestId === null)) return "exactly one of run_id and request_id";
  if ((entry.costPico ?? 0n) < 0n || (entry.chargedPico ?? 0n) < 0n) return "amounts cannot be negative";
  return undefined;
}

/** The columns of one ledger row, one array per column (for unnest), in the order LEDGER_INSERT names them. */
export function ledgerColumns(entries: readonly LedgerInput[]): unknown[][] {
  const text = (pick: (e: LedgerInput) => string | null): Array<string | null> => entries.map(pick);
  const tokens = (pick: (t: LedgerInput["tokens"]) => bigint | undefined): Array<string | null> => entries.map((e) => pick(e.tokens)?.toString() ?? null);
  return [
    text((e) => e.callRef),
    text((e) => e.ticketId),
    text((e) => e.memberId),
    text((e) => e.teamId),
    text((e) => e.clientKind),
    text((e) => e.modelId),
    text((e) => e.providerId),
    text((e) => e.upstreamModel),
    text((e) => e.runId),
    entries.map((e) => e.callIndex),
    text((e) => e.requestId),
    text((e) => e.outcome),
    tokens((t) => t.input),
    tokens((t) => t.output),
    tokens((t) => t.cacheRead),
    tokens((t) => t.cacheWrite),
    tokens((t) => t.reasoning),
    text((e) => usd(e.costPico)),
    text((e) => usd(e.chargedPico)),
    entries.map((e) => e.startedAt),
  ];
}

/**
 * Every new admission of a batch in one statement. A ticket already in the
 * ledger (or earlier in the batch) inserts nothing; the others take the next
 * attempt numbers of their call reference, in batch order. Runs after the
 * call references' locks, so it sees what an earlier holder committed.
 *
 * Whether a ticket is in the ledger is one probe of its unique index per
 * batch entry: the LIMIT inside the lateral subquery keeps Postgres from
 * turning the test into an anti join, which it planned as a hash of the whole
 * ledger whenever its statistics were behind the ledger's size. Then every
 * batch read the whole append-only ledger: in bench/ledger-settle.ts, 6, 15-17
 * and 39 ms of Postgres CPU per batch of 200 calls at 0, 30,000 and 100,000
 * rows, against 5.5-7 ms at each size now. Exported for the test that reads
 * its plan.
 */
export const LEDGER_INSERT = `
  WITH input AS (
    SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::text[],
                         $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[], $18::numeric[], $19::numeric[], $20::timestamptz[])
      WITH ORDINALITY AS i(call_ref, ticket_id, member_id, team_id, client_kind, model_id, provider_id, upstream_model, run_id, call_index, request_id, outcome,
                           input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, charged_usd, started_at, n)
  ), fresh AS (
    SELECT DISTINCT ON (ticket_id) i.* FROM input i
      LEFT JOIN LATERAL (SELECT true AS settled FROM ledger l WHERE l.ticket_id = i.ticket_id LIMIT 1) before ON true
     WHERE before.settled IS NULL ORDER BY ticket_id, n
  )
  INSERT INTO ledger (call_ref, attempt, ticket_id, member_id, team_id, client_kind, model_id, provider_id, upstream_model, run_id, call_index, request_id, outcome,
                      input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, charged_usd, started_at)
  SELECT call_ref, (SELECT coalesce(max(l.attempt), 0) FROM ledger l WHERE l.call_ref = f.call_ref) + row_number() OVER (PARTITION BY call_ref ORDER BY n),
         ticket_id, member_id, team_id, client_kind, model_id, provider_id, upstream_model, run_id, call_index, request_id, outcome,
         input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, charged_usd, started_at
    FROM fresh f ORDER BY n
  RETURNING ticket_id::text, attempt`;

/** Inserts the batch's new rows; per ticket whether this batch wrote it and its attempt number. */
async function insertLedgerRows(tx: Transaction, entries: readonly LedgerInput[]): Promise<Map<string, { recorded: boolean; attempt: number }>> {
  const inserted = await preparedQuery<{ ticket_id: string; attempt: number }>(tx, LEDGER_INSERT, ledgerColumns(entries));
  const out = new Map<string, { recorded: boolean; attempt: number }>();
  for (const row of inserted.rows) out.set(row.ticket_id, { recorded: true, attempt: row.attempt });
  const settledBefore = [...new Set(entries.map((e) => e.ticketId.toLowerCase()))].filter((ticket) => !out.has(ticket));
  if (settledBefore.length > 0) {
    const previous = await preparedQuery<{ ticket_id: string; attempt: number }>(tx, "SELECT ticket_id::text, attempt FROM ledger WHERE ticket_id = ANY($1::uuid[])", [settledBefore]);
    for (const row of previous.rows) out.set(row.ticket_id, { recorded: false, attempt: row.attempt });
  }
  return out;
}

/** One settled call as the store takes it. */
export interface SettleInput {
  readonly entry: LedgerInput;
  readonly charges: readonly LeaseChargeInput[];
}

export type SettleResult = Outcome<{ recorded: boolean; attempt: number }>;

/** A budget counter's share of a batch: what its calls charged in one window. */
interface CounterCharge {
  readonly budget: BudgetRow;
  readonly key: string;
  readonly window: TimeWindow;
  amount: bigint;
}

/**
 * Settles several calls in one transaction; a result per call, in order (an
 * invalid call is refused alone, the rest are written). What the calls charge
 * is summed per budget window and per lease first and written once each.
 *
 * Lock order, the same in every transaction that takes these locks, so two
 * batches never wait on each other in a circle: the call references'
 * advisory locks (sorted), then the budget counters (by budget id and window),
 * then the leases (by id), as accounting.acquire takes counters before leases.
 */
export async function settleCalls(pool: pg.Pool, inputs: readonly SettleInput[]): Promise<Outcome<SettleResult[]>> {
  const results: Array<SettleResult | undefined> = inputs.map((input) => {
    const problem = check(input.entry);
    return problem === undefined ? undefined : reject("invalid", problem);
  });
  const valid = inputs.flatMap((input, i) => (results[i] === undefined ? [{ input, i }] : []));
  if (valid.length === 0) return ok(results as SettleResult[]);
  const written = await inTransaction<Map<number, { recorded: boolean; attempt: number }>>(pool, async (tx) => {
    // One attempt number per call reference at a time.
    const refs = [...new Set(valid.map(({ input }) => input.entry.callRef))].sort();
    await preparedQuery(tx, "SELECT pg_advisory_xact_lock(hashtextextended(r, 7)) FROM unnest($1::text[]) WITH ORDINALITY AS u(r, n) ORDER BY n", [refs]);
    const rows = await insertLedgerRows(tx, valid.map(({ input }) => input.entry));
    const settled = new Map<number, { recorded: boolean; attempt: number }>();
    const counters = new Map<string, CounterCharge>();
    const leases = new Map<string, bigint>();
    const budgetsOf = new Map<string, BudgetRow[]>();
    const charged = new Set<string>();
    for (const { input, i } of valid) {
      const { entry } = input;
      const ticket = entry.ticketId.toLowerCase();
      const row = rows.get(ticket) ?? { recorded: false, attempt: 0 };
      // A ticket twice in one batch is written (and charged) once: the first time.
      const first = row.recorded && !charged.has(ticket);
      settled.set(i, first ? row : { recorded: false, attempt: row.attempt });
      if (!first) continue;
      charged.add(ticket);
      const amount = entry.chargedPico ?? 0n;
      if (amount > 0n) {
        for (const budget of await budgetsFor(tx, entry, budgetsOf)) {
          const window = budgetWindow(budget.period, entry.startedAt);
          const slot = `${budget.id}@${window.start.toISOString()}`;
          const seen = counters.get(slot);
          if (seen !== undefined) seen.amount += amount;
          else counters.set(slot, { budget, key: counterKey({ kind: "budget", budgetId: budget.id }), window, amount });
        }
      }
      for (const charge of input.charges) {
        if (charge.kind !== "budget" || !isUuid(charge.leaseId) || charge.amount <= 0n) continue;
        leases.set(charge.leaseId, (leases.get(charge.leaseId) ?? 0n) + charge.amount);
      }
    }
    const byBudgetAndWindow = (a: CounterCharge, b: CounterCharge): number => compareText(a.budget.id, b.budget.id) || a.window.start.getTime() - b.window.start.getTime();
    for (const counter of [...counters.values()].sort(byBudgetAndWindow)) await upsertCounter(tx, counter, counter.amount);
    for (const [leaseId, amount] of [...leases].sort(([a], [b]) => compareText(a, b))) {
      await preparedQuery(tx, "UPDATE accounting_leases SET consumed = consumed + $2 WHERE id = $1", [leaseId, amount.toString()]);
    }
    return ok(settled);
  });
  if (written.kind !== "ok") return written;
  return ok(results.map((result, i) => result ?? ok(written.value.get(i) ?? { recorded: false, attempt: 0 })));
}

/** One settled call (accounting.settle): a batch of one. */
export async function settleCall(pool: pg.Pool, entry: LedgerInput, charges: readonly LeaseChargeInput[]): Promise<SettleResult> {
  const settled = await settleCalls(pool, [{ entry, charges }]);
  return settled.kind === "ok" ? (settled.value[0] as SettleResult) : settled;
}

/** The budgets a call counts against (its member's, its team's, its model's), read once per batch for each member, team and model. */
async function budgetsFor(tx: Transaction, entry: LedgerInput, seen: Map<string, BudgetRow[]>): Promise<BudgetRow[]> {
  const key = `${entry.memberId}\u0000${entry.teamId}\u0000${entry.modelId}`;
  const known = seen.get(key);
  if (known !== undefined) return known;
  const budgets = await preparedQuery<Parameters<typeof budgetFromDb>[0]>(
    tx,
    `SELECT ${BUDGET_COLUMNS} FROM budgets
      WHERE (member_id::text = $1 OR team_id::text = $2) AND (model_id IS NULL OR model_id = $3)
      ORDER BY id`,
    [entry.memberId, entry.teamId, entry.modelId],
  );
  const rows = budgets.rows.map(budgetFromDb);
  seen.set(key, rows);
  return rows;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
