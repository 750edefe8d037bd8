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

async function insertLedgerRow(tx: Transaction, entry: LedgerInput): Promise<number | undefined> {
  // Runs after the call reference's lock (settleCalls), so it sees what an earlier holder
  // committed; inserts nothing when the admission is already in the ledger (no row returned).
  const t = entry.tokens;
  const result = await preparedQuery<{ attempt: number }>(
    tx,
    `INSERT INTO ledger (call_ref, attempt, ticket_id, member_id, team_id, client_kind, model_id, provider_id, upstream_model, run_id, call_index, request_id, outcome,
                         input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, charged_usd, started_at)
     SELECT $1, (SELECT coalesce(max(attempt), 0) + 1 FROM ledger WHERE call_ref = $1), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20
      WHERE NOT EXISTS (SELECT 1 FROM ledger WHERE ticket_id = $2)
     RETURNING attempt`,
    [
      entry.callRef,
      entry.ticketId,
      entry.memberId,
      entry.teamId,
      entry.clientKind,
      entry.modelId,
      entry.providerId,
      entry.upstreamModel,
      entry.runId,
      entry.callIndex,
      entry.requestId,
      entry.outcome,
      t.input?.toString() ?? null,
      t.output?.toString() ?? null,
      t.cacheRead?.toString() ?? null,
      t.cacheWrite?.toString() ?? null,
      t.reasoning?.toString() ?? null,
      usd(entry.costPico),
      usd(entry.chargedPico),
      entry.startedAt,
    ],
  );
  return result.rows[0]?.attempt;
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
    const settled = new Map<number, { recorded: boolean; attempt: number }>();
    const counters = new Map<string, CounterCharge>();
    const leases = new Map<string, bigint>();
    const budgetsOf = new Map<string, BudgetRow[]>();
    for (const { input, i } of valid) {
      const { entry } = input;
      const attempt = await insertLedgerRow(tx, entry);
      if (attempt === undefined) {
        const previous = await preparedQuery<{ attempt: number }>(tx, "SELECT attempt FROM ledger WHERE ticket_id = $1", [entry.ticketId]);
        settled.set(i, { recorded: false, attempt: previous.rows[0]?.attempt ?? 0 });
        continue;
      }
      settled.set(i, { recorded: true, attempt });
      const charged = entry.chargedPico ?? 0n;
      if (charged > 0n) {
        for (const budget of await budgetsFor(tx, entry, budgetsOf)) {
          const window = budgetWindow(budget.period, entry.startedAt);
          const slot = `${budget.id}@${window.start.toISOString()}`;
          const seen = counters.get(slot);
          if (seen !== undefined) seen.amount += charged;
          else counters.set(slot, { budget, key: counterKey({ kind: "budget", budgetId: budget.id }), window, amount: charged });
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
