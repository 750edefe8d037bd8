/** CLI commands for teams, budgets and member limits (command-table.ts lists every command). */
import type { BudgetJson, LimitsJson, TeamJson } from "../actions/admin-json.ts";
import { command, str, teamFlag } from "./command-spec.ts";
import { cell, textTable } from "./text-table.ts";

function teamLine(t: TeamJson): string[] {
  return [t.teamId, t.name + (t.isDefault ? " (default)" : ""), t.allowedModels ? t.allowedModels.join(",") : "all", t.retentionDays ? `${t.retentionDays} days` : "kept", String(t.members)];
}
const TEAM_HEADER = ["TEAM", "NAME", "MODELS", "CONTENT", "MEMBERS"];
const teamFlags = { models: { type: "string", hint: "<id,id|all>" }, "retention-days": { type: "string", hint: "<days|keep>" } } as const;

export const teamList = command({
  words: ["team", "list"],
  args: [],
  flags: {},
  action: "listTeams",
  summary: "teams, their allowed models and content retention",
  input: () => ({}),
  text: ({ teams }) => textTable(TEAM_HEADER, teams.map(teamLine), "no teams"),
});

export const teamCreate = command({
  words: ["team", "create"],
  args: ["<name>"],
  flags: teamFlags,
  action: "createTeam",
  summary: "a team (every model and content kept unless --models / --retention-days)",
  input: ([name], flags) => ({ name, allowedModels: flags["models"], retentionDays: flags["retention-days"] }),
  text: ({ team }) => textTable(TEAM_HEADER, [teamLine(team)], ""),
});

export const teamUpdate = command({
  words: ["team", "update"],
  args: ["<team id>"],
  flags: { name: { type: "string", hint: "<name>" }, ...teamFlags },
  action: "updateTeam",
  summary: "change name, allowed models (all = every model) or retention (keep = no deletion)",
  input: ([teamId], flags) => ({ teamId, name: flags["name"], allowedModels: flags["models"], retentionDays: flags["retention-days"] }),
  text: ({ team }) => textTable(TEAM_HEADER, [teamLine(team)], ""),
});

export const teamDelete = command({
  words: ["team", "delete"],
  args: ["<team id>"],
  flags: {},
  action: "deleteTeam",
  summary: "delete a team without members (its budgets go with it)",
  input: ([teamId]) => ({ teamId }),
  text: ({ deleted }) => `team ${deleted.teamId} deleted\n`,
});

function budgetLine(b: BudgetJson): string[] {
  return [
    b.budgetId,
    b.scope === "team" ? `team ${b.teamId ?? ""}` : `member ${b.memberId ?? ""}`,
    b.modelId ?? "all models",
    b.period,
    `$${b.limitUsd}`,
    `$${b.chargedUsd}${b.unknownCostCalls > 0 ? ` (+${b.unknownCostCalls} unknown)` : ""}`,
    b.windowEnd,
  ];
}
const BUDGET_HEADER = ["BUDGET", "FOR", "MODEL", "PERIOD", "LIMIT", "CHARGED", "RESETS"];

export const budgetList = command({
  words: ["budget", "list"],
  args: [],
  flags: { member: { type: "string", hint: "<id>" }, ...teamFlag },
  action: "listBudgets",
  summary: "budgets and what the current window charged",
  input: (_args, flags) => ({ memberId: str(flags, "member"), teamId: str(flags, "team") }),
  text: ({ budgets }) => textTable(BUDGET_HEADER, budgets.map(budgetLine), "no budgets"),
});

export const budgetSet = command({
  words: ["budget", "set"],
  args: [],
  flags: {
    member: { type: "string", hint: "<id>" },
    ...teamFlag,
    period: { type: "string", hint: "<daily|weekly|monthly>" },
    usd: { type: "string", hint: "<amount>" },
    model: { type: "string", hint: "<model id>" },
  },
  action: "setBudget",
  summary: "the USD budget of --member or --team per UTC period (optionally one --model)",
  input: (_args, flags) => ({
    scope: str(flags, "team") !== "" ? "team" : "member",
    memberId: str(flags, "member"),
    teamId: str(flags, "team"),
    modelId: str(flags, "model"),
    period: flags["period"],
    limitUsd: flags["usd"],
  }),
  text: ({ budget }) => textTable(BUDGET_HEADER, [budgetLine(budget)], ""),
});

export const budgetDelete = command({
  words: ["budget", "delete"],
  args: ["<budget id>"],
  flags: {},
  action: "deleteBudget",
  summary: "remove a budget",
  input: ([budgetId]) => ({ budgetId }),
  text: ({ deleted }) => `budget ${deleted.budgetId} deleted\n`,
});

const limitsText = ({ limits }: { limits: LimitsJson }): string =>
  `member ${limits.memberId}: requests/min ${cell(limits.requestsPerMinute ?? "none")}, tokens/min ${cell(limits.tokensPerMinute ?? "none")}, concurrent runs ${cell(limits.concurrentRuns ?? "none")}\n`;

export const limitsGet = command({
  words: ["limits", "get"],
  args: ["<member id>"],
  flags: {},
  action: "getLimits",
  summary: "a member's rate limits",
  input: ([memberId]) => ({ memberId }),
  text: limitsText,
});

export const limitsSet = command({
  words: ["limits", "set"],
  args: ["<member id>"],
  flags: { rpm: { type: "string", hint: "<n>" }, tpm: { type: "string", hint: "<n>" }, concurrent: { type: "string", hint: "<n>" } },
  action: "setLimits",
  summary: "replace a member's limits (a limit not given is none)",
  input: ([memberId], flags) => ({ memberId, requestsPerMinute: flags["rpm"], tokensPerMinute: flags["tpm"], concurrentRuns: flags["concurrent"] }),
  text: limitsText,
});

