/**
 * The refusals of the accounting, worded once: which limit (the names the
 * run's failure, Cursor's error and the metrics carry), the message a member
 * reads (it names the limit and when it resets) and the wait until then.
 */
import { formatUsd } from "@byok/platform";
import type { AdmissionDecision } from "./call-accounting.ts";
import type { BudgetRule } from "./member-rules.ts";

/** Every limit a call can be refused by. */
export const LIMIT_NAMES = ["member_budget", "team_budget", "model_budget", "requests_per_minute", "tokens_per_minute", "concurrent_runs"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

export type Rejection = Extract<AdmissionDecision, { kind: "rejected" }> & { readonly limit: LimitName };

export function budgetLimitName(budget: BudgetRule): LimitName {
  if (budget.modelId !== undefined) return "model_budget";
  return budget.scope === "team" ? "team_budget" : "member_budget";
}

function budgetLabel(budget: BudgetRule, teamName: string): string {
  const owner = budget.scope === "team" ? `Team ${JSON.stringify(teamName)}'s` : "Your";
  const model = budget.modelId === undefined ? "" : ` for model ${budget.modelId}`;
  return `${owner} ${budget.period} budget of $${formatUsd(budget.limitPico)}${model}`;
}

function waitMs(resetAtMs: number, now: number): number {
  return Math.max(1, Math.ceil(resetAtMs - now));
}

export function budgetUsedUp(budget: BudgetRule, teamName: string, resetAtMs: number, now: number): Rejection {
  return {
    kind: "rejected",
    limit: budgetLimitName(budget),
    message: `${budgetLabel(budget, teamName)} is used up; it resets at ${new Date(resetAtMs).toISOString()} (UTC).`,
    retryAfterMs: waitMs(resetAtMs, now),
  };
}

export function budgetUnpriced(budget: BudgetRule, teamName: string, modelId: string): Rejection {
  return {
    kind: "rejected",
    limit: budgetLimitName(budget),
    message: `${budgetLabel(budget, teamName)} cannot be checked: model ${modelId} has no input and output price in the gateway configuration. Ask your admin to add one.`,
    retryAfterMs: undefined,
  };
}

export function rateUsedUp(limit: "requests_per_minute" | "tokens_per_minute", perMinute: bigint | number, resetAtMs: number, now: number): Rejection {
  const what = limit === "requests_per_minute" ? "requests" : "tokens";
  return {
    kind: "rejected",
    limit,
    message: `Your limit of ${perMinute} ${what} per minute is reached; it resets at ${new Date(resetAtMs).toISOString()} (UTC).`,
    retryAfterMs: waitMs(resetAtMs, now),
  };
}

export function tooManyRuns(limit: number, running: number): Rejection {
  return {
    kind: "rejected",
    limit: "concurrent_runs",
    message: `Your limit of ${limit} concurrent run${limit === 1 ? "" : "s"} is reached (${running} running); it frees up when one of them ends.`,
    retryAfterMs: undefined,
  };
}

export function unknownRun(): Rejection {
  return { kind: "rejected", limit: "concurrent_runs", message: "This run is not known to the store, so the concurrent-run limit cannot be checked.", retryAfterMs: undefined };
}
