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
import { BUDGET_COLUMNS, budgetFromDb } from "./budgets.ts";
import { isUuid } from "./uuid.ts";
import { budgetWindow } from "./windows.ts";

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
  // One attempt number per call reference at a time.
  await preparedQuery(tx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 7))", [entry.callRef]);
  // A statement after the lock (it sees what an earlier holder committed): inserts
  // nothing when the admission is already in the ledger (no row returned).
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

async function chargeBudgets(tx: Transaction, entry: LedgerInput, charged: bigint): Promise<void> {
  const budgets = await preparedQuery<Parameters<typeof budgetFromDb>[0]>(
    tx,
    `SELECT ${BUDGET_COLUMNS} FROM budgets
      WHERE (member_id::text = $1 OR team_id::text = $2) AND (model_id IS NULL OR model_id = $3)
      ORDER BY id`,
    [entry.memberId, entry.teamId, entry.modelId],
  );
  for (const budget of budgets.rows.map(budgetFromDb)) {
    await upsertCounter(tx, { key: counterKey({ kind: "budget", budgetId: budget.id }), window: budgetWindow(budget.period, entry.startedAt), budget }, charged);
  }
}

export function settleCall(pool: pg.Pool, entry: LedgerInput, charges: readonly LeaseChargeInput[]): Promise<Outcome<{ recorded: boolean; attempt: number }>> {
  const problem = check(entry);
  if (problem !== undefined) return Promise.resolve(reject("invalid", problem));
  return inTransaction<{ recorded: boolean; attempt: number }>(pool, async (tx) => {
    const attempt = await insertLedgerRow(tx, entry);
    if (attempt === undefined) {
      const previous = await preparedQuery<{ attempt: number }>(tx, "SELECT attempt FROM ledger WHERE ticket_id = $1", [entry.ticketId]);
      return ok({ recorded: false, attempt: previous.rows[0]?.attempt ?? 0 });
    }
    // Counters first (budgets by id), leases last: the order acquire locks them in.
    if ((entry.chargedPico ?? 0n) > 0n) await chargeBudgets(tx, entry, entry.chargedPico ?? 0n);
    const leases = charges.filter((c) => c.kind === "budget" && isUuid(c.leaseId) && c.amount > 0n).sort((a, b) => (a.leaseId < b.leaseId ? -1 : a.leaseId > b.leaseId ? 1 : 0));
    for (const charge of leases) await preparedQuery(tx, "UPDATE accounting_leases SET consumed = consumed + $2 WHERE id = $1", [charge.leaseId, charge.amount.toString()]);
    return ok({ recorded: true, attempt });
  });
}
