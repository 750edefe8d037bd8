/**
 * member.policy: what applies to one member's model calls, in one answer for
 * the provider gateway's accounting (and the adapter's model list): the team
 * and the models it allows, the member's and the team's budgets, the member's
 * limits. A member id without a record ("local", runs that did not pass the
 * edge proxy) gets the default team and nothing of its own.
 */
import { DEFAULT_TEAM_ID } from "@byok/contracts";
import { query, type Queryable } from "../database.ts";
import { ok, type Outcome } from "../outcome.ts";
import { findMember } from "../members.ts";
import { BUDGET_COLUMNS, budgetFromDb, type BudgetRow } from "./budgets.ts";
import { findMemberLimits, type MemberLimitsRow } from "./member-limits.ts";
import { findTeam, type TeamRow } from "./teams.ts";

export interface MemberPolicyRow {
  readonly memberId: string;
  readonly team: TeamRow;
  readonly budgets: readonly BudgetRow[];
  readonly limits: MemberLimitsRow;
}

export async function memberPolicy(db: Queryable, memberId: string): Promise<Outcome<MemberPolicyRow>> {
  const member = await findMember(db, memberId);
  const team = (await findTeam(db, member?.teamId ?? DEFAULT_TEAM_ID)) ?? (await findTeam(db, DEFAULT_TEAM_ID));
  if (!team) throw new Error("the default team is missing (migration 3 not applied?)");
  const budgets = await query<Parameters<typeof budgetFromDb>[0]>(
    db,
    `SELECT ${BUDGET_COLUMNS} FROM budgets WHERE ($1::uuid IS NOT NULL AND member_id = $1::uuid) OR team_id = $2 ORDER BY id`,
    [member?.id ?? null, team.id],
  );
  const limits = await findMemberLimits(db, member?.id ?? memberId);
  return ok({ memberId, team, budgets: budgets.rows.map(budgetFromDb), limits });
}
