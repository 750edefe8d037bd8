/**
 * Budgets in USD: for a member or a team, optionally for one model only, over
 * a daily, weekly or monthly UTC window (windows.ts). budget.set creates or
 * replaces the budget of (target, model, period). What a window has used is
 * read from the ledger: `charged_usd` of the calls that started in it (the
 * cost, or the reservation of a call whose cost is unknown).
 */
import { randomUUID } from "node:crypto";
import { formatUsd, parseUsd } from "@byok/platform";
import { query, type Queryable } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { findMember } from "../members.ts";
import { findTeam } from "./teams.ts";
import { isUuid } from "./uuid.ts";
import { budgetWindow, type BudgetPeriod, type TimeWindow } from "./windows.ts";

export type BudgetScope = "member" | "team";

export interface BudgetRow {
  readonly id: string;
  readonly scope: BudgetScope;
  readonly memberId: string | null;
  readonly teamId: string | null;
  readonly modelId: string | null;
  readonly period: BudgetPeriod;
  /** USD decimal. */
  readonly limitUsd: string;
}

export interface BudgetUse {
  readonly budget: BudgetRow;
  readonly window: TimeWindow;
  readonly chargedUsd: string;
  readonly unknownCostCalls: number;
}

interface BudgetDbRow {
  id: string;
  scope: BudgetScope;
  member_id: string | null;
  team_id: string | null;
  model_id: string | null;
  period: BudgetPeriod;
  limit_usd: string;
}

export const BUDGET_COLUMNS = "id, scope, member_id, team_id, model_id, period, limit_usd";

export function budgetFromDb(row: BudgetDbRow): BudgetRow {
  return {
    id: row.id,
    scope: row.scope,
    memberId: row.member_id,
    teamId: row.team_id,
    modelId: row.model_id,
    period: row.period,
    limitUsd: formatUsd(parseUsd(row.limit_usd) ?? 0n),
  };
}

export interface BudgetInput {
  readonly scope: BudgetScope;
  readonly memberId: string;
  readonly teamId: string;
  /** "" = every model. */
  readonly modelId: string;
  readonly period: BudgetPeriod;
  readonly limitUsd: string;
}

const MODEL_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The ledger rows a budget counts: its member's or team's calls (of its model,
 * when it has one). `$1` member id, `$2` team id, `$3` model id ('' = all).
 */
export const LEDGER_MATCHES_BUDGET = `(CASE WHEN $1::text <> '' THEN l.member_id = $1 ELSE l.team_id::text = $2 END) AND ($3 = '' OR l.model_id = $3)`;

async function windowUse(db: Queryable, budget: BudgetRow, window: TimeWindow): Promise<{ charged: string; unknown: number }> {
  const result = await query<{ charged: string | null; unknown: string }>(
    db,
    `SELECT sum(l.charged_usd) AS charged, count(*) FILTER (WHERE l.cost_usd IS NULL) AS unknown
       FROM ledger l
      WHERE ${LEDGER_MATCHES_BUDGET} AND l.started_at >= $4 AND l.started_at < $5`,
    [budget.memberId ?? "", budget.teamId ?? "", budget.modelId ?? "", window.start, window.end],
  );
  const row = result.rows[0];
  return { charged: formatUsd(parseUsd(row?.charged ?? "0") ?? 0n), unknown: Number(row?.unknown ?? 0) };
}

async function withUse(db: Queryable, budget: BudgetRow, now: Date): Promise<BudgetUse> {
  const window = budgetWindow(budget.period, now);
  const use = await windowUse(db, budget, window);
  return { budget, window, chargedUsd: use.charged, unknownCostCalls: use.unknown };
}

export async function setBudget(db: Queryable, input: BudgetInput, now: Date): Promise<Outcome<BudgetUse>> {
  const limit = parseUsd(input.limitUsd);
  if (limit === undefined) return reject("invalid", `limit_usd is not a USD amount >= 0 with at most 12 decimals: ${JSON.stringify(input.limitUsd)}`);
  if (input.modelId !== "" && !MODEL_ID.test(input.modelId)) return reject("invalid", `not a model id: ${JSON.stringify(input.modelId)}`);
  let memberId: string | null = null;
  let teamId: string | null = null;
  if (input.scope === "member") {
    const member = await findMember(db, input.memberId);
    if (!member) return reject("not_found", `member ${input.memberId} not found`);
    memberId = member.id;
  } else {
    const team = await findTeam(db, input.teamId);
    if (!team) return reject("not_found", `team ${input.teamId} not found`);
    teamId = team.id;
  }
  const result = await query<BudgetDbRow>(
    db,
    `INSERT INTO budgets (id, scope, member_id, team_id, model_id, period, limit_usd) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (scope, member_id, team_id, model_id, period) DO UPDATE SET limit_usd = EXCLUDED.limit_usd, updated_at = now()
     RETURNING ${BUDGET_COLUMNS}`,
    [randomUUID(), input.scope, memberId, teamId, input.modelId === "" ? null : input.modelId, input.period, formatUsd(limit)],
  );
  return ok(await withUse(db, budgetFromDb(result.rows[0] as BudgetDbRow), now));
}

export async function deleteBudget(db: Queryable, budgetId: string): Promise<Outcome<null>> {
  if (!isUuid(budgetId)) return reject("not_found", `budget ${budgetId} not found`);
  const result = await query(db, "DELETE FROM budgets WHERE id = $1", [budgetId]);
  if (result.rowCount === 0) return reject("not_found", `budget ${budgetId} not found`);
  await query(db, "DELETE FROM accounting_counters WHERE counter = $1", [`budget:${budgetId}`]);
  return ok(null);
}

export async function findBudget(db: Queryable, budgetId: string): Promise<BudgetRow | undefined> {
  if (!isUuid(budgetId)) return undefined;
  const result = await query<BudgetDbRow>(db, `SELECT ${BUDGET_COLUMNS} FROM budgets WHERE id = $1`, [budgetId]);
  const row = result.rows[0];
  return row ? budgetFromDb(row) : undefined;
}

/** The budgets of a member and its team, of a team, or all ("" filters); team budgets first, then member, by model and period. */
export async function listBudgets(db: Queryable, filter: { memberId: string; teamId: string }, now: Date): Promise<Outcome<BudgetUse[]>> {
  let rows: BudgetDbRow[];
  if (filter.memberId !== "") {
    const member = await findMember(db, filter.memberId);
    if (!member) return reject("not_found", `member ${filter.memberId} not found`);
    rows = (
      await query<BudgetDbRow>(db, `SELECT ${BUDGET_COLUMNS} FROM budgets WHERE member_id = $1 OR team_id = $2 ORDER BY scope DESC, model_id NULLS FIRST, period`, [
        member.id,
        member.teamId,
      ])
    ).rows;
  } else if (filter.teamId !== "") {
    const team = await findTeam(db, filter.teamId);
    if (!team) return reject("not_found", `team ${filter.teamId} not found`);
    rows = (await query<BudgetDbRow>(db, `SELECT ${BUDGET_COLUMNS} FROM budgets WHERE team_id = $1 ORDER BY model_id NULLS FIRST, period`, [team.id])).rows;
  } else {
    rows = (await query<BudgetDbRow>(db, `SELECT ${BUDGET_COLUMNS} FROM budgets ORDER BY scope DESC, team_id, member_id, model_id NULLS FIRST, period`)).rows;
  }
  const uses: BudgetUse[] = [];
  for (const row of rows) uses.push(await withUse(db, budgetFromDb(row), now));
  return ok(uses);
}
