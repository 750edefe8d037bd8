/** Admin actions on teams, budgets and member limits (admin-actions.ts has the whole table). */
import { z } from "zod";
import { action, count, id, modelList, retention, text, usd } from "./admin-action.ts";
import { PERIODS, SCOPES, budgetJson, limitsJson, teamJson } from "./admin-json.ts";

/** A team's allowed models (null / absent: every model) and retention (null / absent: content kept) as the store takes them. */
function teamPolicy(allowedModels: string[] | null | undefined, retentionDays: number | null | undefined) {
  return { ...(allowedModels ? { allowedModels: { modelIds: allowedModels } } : {}), ...(retentionDays ? { retentionDays } : {}) };
}

export const TEAM_ACTIONS = {
  listTeams: action({
    name: "team.list",
    summary: "teams with their allowed models and retention",
    mutates: false,
    input: z.object({}),
    async run(store) {
      return { teams: (await store.listTeams()).map(teamJson) };
    },
  }),
  createTeam: action({
    name: "team.create",
    summary: "a team (allowed models: all unless listed; content kept unless retention days are set)",
    mutates: true,
    input: z.object({ name: z.string().trim().min(1, "name is required").max(200), allowedModels: modelList, retentionDays: retention }),
    async run(store, input) {
      const team = await store.createTeam({ name: input.name, ...teamPolicy(input.allowedModels, input.retentionDays) });
      return { team: teamJson(team) };
    },
  }),
  updateTeam: action({
    name: "team.update",
    summary: "change a team's name, allowed models or retention (what is not given stays)",
    mutates: true,
    input: z.object({ teamId: id("team id"), name: z.string().trim().min(1).max(200).optional(), allowedModels: modelList, retentionDays: retention }),
    async run(store, input) {
      const current = teamJson(await store.getTeam(input.teamId));
      const allowed = input.allowedModels === undefined ? current.allowedModels : input.allowedModels;
      const days = input.retentionDays === undefined ? current.retentionDays : input.retentionDays;
      const team = await store.updateTeam({ teamId: input.teamId, name: input.name ?? current.name, ...teamPolicy(allowed, days) });
      return { team: teamJson(team) };
    },
  }),
  deleteTeam: action({
    name: "team.delete",
    summary: "delete a team without members (its budgets go with it)",
    mutates: true,
    input: z.object({ teamId: id("team id") }),
    async run(store, input) {
      await store.deleteTeam(input.teamId);
      return { deleted: { teamId: input.teamId } };
    },
  }),

  // ---- Budgets and limits ----
  listBudgets: action({
    name: "budget.list",
    summary: "budgets with what the current window has charged (--member also lists its team's)",
    mutates: false,
    input: z.object({ memberId: text, teamId: text }),
    async run(store, input) {
      return { budgets: (await store.listBudgets({ memberId: input.memberId, teamId: input.teamId })).map(budgetJson) };
    },
  }),
  setBudget: action({
    name: "budget.set",
    summary: "set the USD budget of a member or team per UTC day, week or month (optionally per model)",
    mutates: true,
    input: z
      .object({
        scope: z.enum(["member", "team"]),
        memberId: text,
        teamId: text,
        modelId: text,
        period: z.enum(["daily", "weekly", "monthly"]),
        limitUsd: usd,
      })
      .refine((b) => (b.scope === "member" ? b.memberId !== "" : b.teamId !== ""), { message: "a member budget needs memberId, a team budget teamId" }),
    async run(store, input) {
      const budget = await store.setBudget({
        scope: SCOPES[input.scope],
        memberId: input.scope === "member" ? input.memberId : "",
        teamId: input.scope === "team" ? input.teamId : "",
        modelId: input.modelId,
        period: PERIODS[input.period],
        limitUsd: input.limitUsd,
      });
      return { budget: budgetJson(budget) };
    },
  }),
  deleteBudget: action({
    name: "budget.delete",
    summary: "remove a budget",
    mutates: true,
    input: z.object({ budgetId: id("budget id") }),
    async run(store, input) {
      await store.deleteBudget(input.budgetId);
      return { deleted: { budgetId: input.budgetId } };
    },
  }),
  getLimits: action({
    name: "limits.get",
    summary: "a member's rate limits (null = none)",
    mutates: false,
    input: z.object({ memberId: id("member id") }),
    async run(store, input) {
      return { limits: limitsJson(await store.getMemberLimits(input.memberId)) };
    },
  }),
  setLimits: action({
    name: "limits.set",
    summary: "replace a member's limits: requests and tokens per minute, concurrent runs (omitted = none)",
    mutates: true,
    input: z.object({
      memberId: id("member id"),
      requestsPerMinute: count("requests per minute"),
      tokensPerMinute: count("tokens per minute"),
      concurrentRuns: count("concurrent runs"),
    }),
    async run(store, input) {
      const limits = await store.setMemberLimits({
        memberId: input.memberId,
        ...(input.requestsPerMinute !== undefined ? { requestsPerMinute: input.requestsPerMinute } : {}),
        ...(input.tokensPerMinute !== undefined ? { tokensPerMinute: BigInt(input.tokensPerMinute) } : {}),
        ...(input.concurrentRuns !== undefined ? { concurrentRuns: input.concurrentRuns } : {}),
      });
      return { limits: limitsJson(limits) };
    },
  }),

} as const;
