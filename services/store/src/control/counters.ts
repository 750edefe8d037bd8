/**
 * The counters the accounting enforces limits on, one row per counter and
 * window (accounting_counters): a budget's day/week/month in picodollars, a
 * member's minute in requests or tokens. `committed` holds what settled calls
 * used in the window. A budget window's row starts from the ledger (calls
 * that started in it before the row existed); a rate window starts at 0.
 */
import { PICO_PER_USD, parseUsd } from "@byok/platform";
import { query, type Queryable } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { LEDGER_MATCHES_BUDGET, findBudget, type BudgetRow } from "./budgets.ts";
import { findMemberLimits } from "./member-limits.ts";
import { budgetWindow, minuteWindow, type TimeWindow } from "./windows.ts";

export type CounterRef =
  | { readonly kind: "budget"; readonly budgetId: string }
  | { readonly kind: "requests_per_minute"; readonly memberId: string }
  | { readonly kind: "tokens_per_minute"; readonly memberId: string };

export function counterKey(ref: CounterRef): string {
  switch (ref.kind) {
    case "budget":
      return `budget:${ref.budgetId}`;
    case "requests_per_minute":
      return `rpm:${ref.memberId}`;
    case "tokens_per_minute":
      return `tpm:${ref.memberId}`;
    default: {
      const never: never = ref;
      throw new Error(`unknown counter ${JSON.stringify(never)}`);
    }
  }
}

/** A counter's current window and limit (undefined = no limit any more). */
export interface CounterTerms {
  readonly key: string;
  readonly window: TimeWindow;
  readonly limit: bigint | undefined;
  readonly budget: BudgetRow | undefined;
}

export async function counterTerms(db: Queryable, ref: CounterRef, now: Date): Promise<Outcome<CounterTerms>> {
  const key = counterKey(ref);
  switch (ref.kind) {
    case "budget": {
      const budget = await findBudget(db, ref.budgetId);
      if (!budget) return reject("not_found", `budget ${ref.budgetId} not found`);
      return ok({ key, window: budgetWindow(budget.period, now), limit: parseUsd(budget.limitUsd) ?? 0n, budget });
    }
    case "requests_per_minute": {
      const limits = await findMemberLimits(db, ref.memberId);
      return ok({ key, window: minuteWindow(now), limit: limits.requestsPerMinute === null ? undefined : BigInt(limits.requestsPerMinute), budget: undefined });
    }
    case "tokens_per_minute": {
      const limits = await findMemberLimits(db, ref.memberId);
      return ok({ key, window: minuteWindow(now), limit: limits.tokensPerMinute ?? undefined, budget: undefined });
    }
    default: {
      const never: never = ref;
      throw new Error(`unknown counter ${JSON.stringify(never)}`);
    }
  }
}

/** What the ledger charged to `budget` in `window`, in picodollars (SQL expression with parameters from `$first`). */
function ledgerChargedSql(first: number): string {
  const matches = LEDGER_MATCHES_BUDGET.replaceAll("$1", `$${first}`).replaceAll("$2", `$${first + 1}`).replaceAll("$3", `$${first + 2}`);
  return `(SELECT coalesce(sum(l.charged_usd), 0) * ${PICO_PER_USD} FROM ledger l
            WHERE ${matches} AND l.started_at >= $${first + 3} AND l.started_at < $${first + 4})`;
}

/**
 * Makes sure the window's row exists: a budget's starts from the ledger, a
 * rate's at 0. Then adds `add` to committed when the row was there already
 * (a new budget row counted the caller's own ledger row in its sum).
 */
export async function upsertCounter(db: Queryable, terms: Pick<CounterTerms, "key" | "window" | "budget">, add: bigint): Promise<void> {
  const { key, window, budget } = terms;
  if (budget === undefined) {
    await query(
      db,
      `INSERT INTO accounting_counters (counter, window_start, window_end, committed) VALUES ($1, $2, $3, $4)
       ON CONFLICT (counter, window_start) DO UPDATE SET committed = accounting_counters.committed + $4`,
      [key, window.start, window.end, add.toString()],
    );
    return;
  }
  await query(
    db,
    `INSERT INTO accounting_counters (counter, window_start, window_end, committed) SELECT $1, $2, $3, ${ledgerChargedSql(5)}
     ON CONFLICT (counter, window_start) DO UPDATE SET committed = accounting_counters.committed + $4`,
    [key, window.start, window.end, add.toString(), budget.memberId ?? "", budget.teamId ?? "", budget.modelId ?? "", window.start, window.end],
  );
}

/** Locks the window's row (creating it first) and returns what is committed in it. */
export async function lockCounter(db: Queryable, terms: CounterTerms): Promise<bigint> {
  const { key, window, budget } = terms;
  if (budget === undefined) {
    await query(db, "INSERT INTO accounting_counters (counter, window_start, window_end) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [key, window.start, window.end]);
  } else {
    await query(
      db,
      `INSERT INTO accounting_counters (counter, window_start, window_end, committed) SELECT $1, $2, $3, ${ledgerChargedSql(4)} ON CONFLICT DO NOTHING`,
      [key, window.start, window.end, budget.memberId ?? "", budget.teamId ?? "", budget.modelId ?? "", window.start, window.end],
    );
  }
  const result = await query<{ committed: string }>(db, "SELECT committed FROM accounting_counters WHERE counter = $1 AND window_start = $2 FOR UPDATE", [key, window.start]);
  return BigInt(result.rows[0]?.committed ?? "0");
}
