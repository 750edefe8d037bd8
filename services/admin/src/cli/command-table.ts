/**
 * The admin CLI's commands: words, positional arguments and flags -> one
 * admin action (../actions/admin-actions.ts) and how its result reads as
 * text. `--json` prints the action's result as the API answers it.
 * admin-commands.ts parses against this table; the help text is made from it.
 */
import type { ActionResult, AdminActionKey } from "../actions/admin-actions.ts";
import type { AuditJson, BudgetJson, KeyJson, LimitsJson, MemberJson, RunJson, TeamJson } from "../actions/admin-json.ts";
import { cell, textTable } from "./text-table.ts";
import { formatUsageTable } from "./usage-table.ts";

export type Flags = Readonly<Record<string, string | boolean | undefined>>;

export interface FlagSpec {
  readonly type: "string" | "boolean";
  /** Shown in the usage line: `--since <date>`. */
  readonly hint?: string;
}

export interface CliCommand<K extends AdminActionKey = AdminActionKey> {
  readonly words: readonly string[];
  /** Positional arguments, in order (all required). */
  readonly args: readonly string[];
  readonly flags: Readonly<Record<string, FlagSpec>>;
  readonly action: K;
  readonly summary: string;
  /** Older spelling kept working (not listed in the help). */
  readonly alias?: boolean;
  input(args: readonly string[], flags: Flags): unknown;
  text(result: ActionResult<K>): string;
}

function command<K extends AdminActionKey>(spec: CliCommand<K>): CliCommand<K> {
  return spec;
}

const str = (flags: Flags, name: string): string => (typeof flags[name] === "string" ? (flags[name] as string) : "");

function memberLine(m: MemberJson): string {
  return `${m.memberId}\t${m.name}\tcreated ${m.createdAt}${m.revokedAt ? `\trevoked ${m.revokedAt}` : ""}`;
}

const teamFlag = { team: { type: "string", hint: "<team id>" } } as const;

const memberCreate = command({
  words: ["member", "create"],
  args: ["<name>"],
  flags: { ...teamFlag, "key-label": { type: "string", hint: "<label>" }, expires: { type: "string", hint: "<date>" } },
  action: "createMember",
  summary: "a member and its gateway key (printed once); default team unless --team",
  input: ([name], flags) => ({ name, teamId: str(flags, "team"), keyLabel: str(flags, "key-label"), keyExpiresAt: str(flags, "expires") }),
  text: ({ member, key }) =>
    [
      `member ${member.memberId} (${member.name}) created.`,
      `gateway key (shown once, store it now): ${key}`,
      `next, on ${member.name}'s machine: npm run setup -- --gateway http://<gateway host>:<proxy port> --key ${key}`,
      "",
    ].join("\n"),
});

const memberList = command({
  words: ["member", "list"],
  args: [],
  flags: { all: { type: "boolean" }, ...teamFlag },
  action: "listMembers",
  summary: "members (--all: with revoked ones)",
  input: (_args, flags) => ({ includeRevoked: flags["all"] === true, teamId: str(flags, "team") }),
  text: ({ members }) => (members.length === 0 ? "no members\n" : `${members.map(memberLine).join("\n")}\n`),
});

const memberRevoke = command({
  words: ["member", "revoke"],
  args: ["<member id>"],
  flags: {},
  action: "revokeMember",
  summary: "every key of the member stops working (within the proxy's MEMBER_CACHE_MS)",
  input: ([memberId]) => ({ memberId }),
  text: ({ member }) => `revoked: ${memberLine(member)}\n`,
});

const memberTeam = command({
  words: ["member", "team"],
  args: ["<member id>", "<team id>"],
  flags: {},
  action: "setMemberTeam",
  summary: "move a member to another team",
  input: ([memberId, teamId]) => ({ memberId, teamId }),
  text: ({ member }) => `${member.memberId} (${member.name}) is now in team ${member.teamId}\n`,
});

const usage = command({
  words: ["usage"],
  args: [],
  flags: { member: { type: "string", hint: "<id>" }, since: { type: "string", hint: "<date>" }, until: { type: "string", hint: "<date>" } },
  action: "memberUsage",
  summary: "runs and provider-reported tokens per member (runs that began in [--since, --until))",
  input: (_args, flags) => ({ memberId: str(flags, "member"), since: str(flags, "since"), until: str(flags, "until") }),
  text: ({ members }) => formatUsageTable(members),
});

function keyState(k: KeyJson): string {
  if (k.active) return "active";
  if (k.replacedByKeyId) return `replaced by ${k.replacedByKeyId}`;
  return k.revokedAt ? "revoked" : "expired";
}

const keyList = command({
  words: ["key", "list"],
  args: ["<member id>"],
  flags: { all: { type: "boolean" } },
  action: "listKeys",
  summary: "a member's keys (--all: with revoked and expired ones)",
  input: ([memberId], flags) => ({ memberId, includeInactive: flags["all"] === true }),
  text: ({ keys }) =>
    textTable(
      ["KEY", "LABEL", "CREATED", "EXPIRES", "STATE"],
      keys.map((k) => [k.keyId, cell(k.label), k.createdAt, k.expiresAt ?? "never", keyState(k)]),
      "no keys",
    ),
});

const secretLines = (title: string, secret: string): string => `${title}\ngateway key (shown once, store it now): ${secret}\n`;

const keyCreate = command({
  words: ["key", "create"],
  args: ["<member id>"],
  flags: { label: { type: "string", hint: "<label>" }, expires: { type: "string", hint: "<date>" } },
  action: "createKey",
  summary: "another key for the member (printed once)",
  input: ([memberId], flags) => ({ memberId, label: str(flags, "label"), expiresAt: str(flags, "expires") }),
  text: ({ key, secret }) => secretLines(`key ${key.keyId} created for member ${key.memberId}${key.expiresAt ? ` (expires ${key.expiresAt})` : ""}.`, secret),
});

const keyRevoke = command({
  words: ["key", "revoke"],
  args: ["<key id>"],
  flags: {},
  action: "revokeKey",
  summary: "one key stops working (within MEMBER_CACHE_MS)",
  input: ([keyId]) => ({ keyId }),
  text: ({ key }) => `revoked key ${key.keyId} of member ${key.memberId}\n`,
});

const keyRotate = command({
  words: ["key", "rotate"],
  args: ["<key id>"],
  flags: { expires: { type: "string", hint: "<date>" }, "grace-seconds": { type: "string", hint: "<n>" } },
  action: "rotateKey",
  summary: "a new key replaces it; the old one stops now or after --grace-seconds",
  input: ([keyId], flags) => ({ keyId, expiresAt: str(flags, "expires"), graceSeconds: str(flags, "grace-seconds") }),
  text: ({ key, secret, previous }) =>
    secretLines(`key ${previous.keyId} replaced by ${key.keyId}${previous.active ? ` (the old key works until ${previous.expiresAt})` : ""}.`, secret),
});

function teamLine(t: TeamJson): string[] {
  return [t.teamId, t.name + (t.isDefault ? " (default)" : ""), t.allowedModels ? t.allowedModels.join(",") : "all", t.retentionDays ? `${t.retentionDays} days` : "kept", String(t.members)];
}
const TEAM_HEADER = ["TEAM", "NAME", "MODELS", "CONTENT", "MEMBERS"];
const teamFlags = { models: { type: "string", hint: "<id,id|all>" }, "retention-days": { type: "string", hint: "<days|keep>" } } as const;

const teamList = command({
  words: ["team", "list"],
  args: [],
  flags: {},
  action: "listTeams",
  summary: "teams, their allowed models and content retention",
  input: () => ({}),
  text: ({ teams }) => textTable(TEAM_HEADER, teams.map(teamLine), "no teams"),
});

const teamCreate = command({
  words: ["team", "create"],
  args: ["<name>"],
  flags: teamFlags,
  action: "createTeam",
  summary: "a team (every model and content kept unless --models / --retention-days)",
  input: ([name], flags) => ({ name, allowedModels: flags["models"], retentionDays: flags["retention-days"] }),
  text: ({ team }) => textTable(TEAM_HEADER, [teamLine(team)], ""),
});

const teamUpdate = command({
  words: ["team", "update"],
  args: ["<team id>"],
  flags: { name: { type: "string", hint: "<name>" }, ...teamFlags },
  action: "updateTeam",
  summary: "change name, allowed models (all = every model) or retention (keep = no deletion)",
  input: ([teamId], flags) => ({ teamId, name: flags["name"], allowedModels: flags["models"], retentionDays: flags["retention-days"] }),
  text: ({ team }) => textTable(TEAM_HEADER, [teamLine(team)], ""),
});

const teamDelete = command({
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

const budgetList = command({
  words: ["budget", "list"],
  args: [],
  flags: { member: { type: "string", hint: "<id>" }, ...teamFlag },
  action: "listBudgets",
  summary: "budgets and what the current window charged",
  input: (_args, flags) => ({ memberId: str(flags, "member"), teamId: str(flags, "team") }),
  text: ({ budgets }) => textTable(BUDGET_HEADER, budgets.map(budgetLine), "no budgets"),
});

const budgetSet = command({
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

const budgetDelete = command({
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

const limitsGet = command({
  words: ["limits", "get"],
  args: ["<member id>"],
  flags: {},
  action: "getLimits",
  summary: "a member's rate limits",
  input: ([memberId]) => ({ memberId }),
  text: limitsText,
});

const limitsSet = command({
  words: ["limits", "set"],
  args: ["<member id>"],
  flags: { rpm: { type: "string", hint: "<n>" }, tpm: { type: "string", hint: "<n>" }, concurrent: { type: "string", hint: "<n>" } },
  action: "setLimits",
  summary: "replace a member's limits (a limit not given is none)",
  input: ([memberId], flags) => ({ memberId, requestsPerMinute: flags["rpm"], tokensPerMinute: flags["tpm"], concurrentRuns: flags["concurrent"] }),
  text: limitsText,
});

function runLine(r: RunJson): string[] {
  const usd = r.costUsd !== undefined ? `$${r.costUsd}${r.unknownCostCalls > 0 ? "+?" : ""}` : r.unknownCostCalls > 0 ? "unknown" : "-";
  return [
    r.startedAt,
    r.runId,
    r.memberId,
    cell(r.modelId),
    r.status + (r.failureKind ? ` (${r.failureKind})` : ""),
    r.durationMs !== undefined ? `${(r.durationMs / 1000).toFixed(1)}s` : "-",
    `${cell(r.usage.inputTokens)}/${cell(r.usage.outputTokens)}`,
    usd,
  ];
}

const runs = command({
  words: ["runs"],
  args: [],
  flags: {
    running: { type: "boolean" },
    member: { type: "string", hint: "<id>" },
    ...teamFlag,
    limit: { type: "string", hint: "<n>" },
    before: { type: "string", hint: "<time>" },
  },
  action: "recentRuns",
  summary: "recent runs: status, failure kind, duration, tokens, cost (--running: in flight)",
  input: (_args, flags) => ({ running: flags["running"] === true, memberId: str(flags, "member"), teamId: str(flags, "team"), limit: str(flags, "limit"), before: str(flags, "before") }),
  text: ({ runs }) => textTable(["STARTED", "RUN", "MEMBER", "MODEL", "STATUS", "TIME", "IN/OUT", "COST"], runs.map(runLine), "no runs"),
});

const spend = command({
  words: ["spend"],
  args: [],
  flags: {
    group: { type: "string", hint: "<member|team|model>" },
    bucket: { type: "string", hint: "<hour|day>" },
    since: { type: "string", hint: "<date>" },
    until: { type: "string", hint: "<date>" },
    member: { type: "string", hint: "<id>" },
    ...teamFlag,
    model: { type: "string", hint: "<id>" },
  },
  action: "spendSeries",
  summary: "spend and tokens per hour/day by member, team or model (default: 7 days by day)",
  input: (_args, flags) => ({
    group: flags["group"],
    bucket: flags["bucket"],
    since: str(flags, "since"),
    until: str(flags, "until"),
    memberId: str(flags, "member"),
    teamId: str(flags, "team"),
    modelId: str(flags, "model"),
  }),
  text: ({ group, points }) =>
    textTable(
      ["BUCKET", group.toUpperCase(), "CALLS", "COST", "INPUT", "OUTPUT"],
      points.map((p) => [p.bucketStart, p.key, String(p.calls), `$${p.costUsd}${p.unknownCostCalls > 0 ? ` (+${p.unknownCostCalls} unknown)` : ""}`, cell(p.inputTokens), cell(p.outputTokens)]),
      "no model calls in the range",
    ),
});

const ledger = command({
  words: ["ledger"],
  args: [],
  flags: {
    run: { type: "string", hint: "<run id>" },
    member: { type: "string", hint: "<id>" },
    since: { type: "string", hint: "<date>" },
    until: { type: "string", hint: "<date>" },
    limit: { type: "string", hint: "<n>" },
  },
  action: "listLedger",
  summary: "ledger rows, one per model call (best with --json)",
  input: (_args, flags) => ({ runId: str(flags, "run"), memberId: str(flags, "member"), since: str(flags, "since"), until: str(flags, "until"), limit: str(flags, "limit") }),
  text: ({ entries }) =>
    textTable(
      ["STARTED", "CALL", "MEMBER", "MODEL", "OUTCOME", "COST"],
      entries.map((e) => [String(e["startedAt"]), String(e["callRef"]), String(e["memberId"]), String(e["modelId"]), String(e["outcome"]), e["costUsd"] === undefined ? "unknown" : `$${String(e["costUsd"])}`]),
      "no ledger rows",
    ),
});

function auditSubject(e: AuditJson): string {
  return [e.memberId && `member ${e.memberId}`, e.teamId && `team ${e.teamId}`, e.keyId && `key ${e.keyId}`, e.modelId && `model ${e.modelId}`, e.runId && `run ${e.runId}`]
    .filter(Boolean)
    .join(", ");
}

const audit = command({
  words: ["audit"],
  args: [],
  flags: {
    action: { type: "string", hint: "<prefix>" },
    member: { type: "string", hint: "<id>" },
    since: { type: "string", hint: "<date>" },
    until: { type: "string", hint: "<date>" },
    limit: { type: "string", hint: "<n>" },
    before: { type: "string", hint: "<id>" },
  },
  action: "listAudit",
  summary: "the audit log: admin actions and run starts, newest first",
  input: (_args, flags) => ({
    action: str(flags, "action"),
    memberId: str(flags, "member"),
    since: str(flags, "since"),
    until: str(flags, "until"),
    limit: str(flags, "limit"),
    beforeId: str(flags, "before"),
  }),
  text: ({ entries }) => textTable(["ID", "AT", "ACTION", "BY", "SUBJECT", "DETAILS"], entries.map((e) => [String(e.id), e.at, e.action, e.actor, cell(auditSubject(e)), JSON.stringify(e.details)]), "nothing recorded"),
});

const retentionRun = command({
  words: ["retention", "run"],
  args: [],
  flags: {},
  action: "purgeContent",
  summary: "delete conversation content older than each team's retention now",
  input: () => ({}),
  text: ({ purge }) =>
    `retention: ${purge.conversations} conversations purged (${purge.messages} messages, ${purge.revisions} revisions, ${purge.toolRounds} tool rounds, ${purge.toolResults} tool results, ${purge.blobs} blobs)\n`,
});

export const CLI_COMMANDS: readonly CliCommand[] = [
  memberCreate,
  memberList,
  memberRevoke,
  memberTeam,
  usage,
  keyList,
  keyCreate,
  keyRevoke,
  keyRotate,
  teamList,
  teamCreate,
  teamUpdate,
  teamDelete,
  budgetList,
  budgetSet,
  budgetDelete,
  limitsGet,
  limitsSet,
  runs,
  spend,
  ledger,
  audit,
  retentionRun,
  // The first spellings (before teams and keys): still accepted.
  { ...memberCreate, words: ["create"], alias: true },
  { ...memberList, words: ["list"], alias: true },
  { ...memberRevoke, words: ["revoke"], alias: true },
] as readonly CliCommand[];

export function usageLine(c: CliCommand): string {
  const flags = Object.entries(c.flags).map(([name, f]) => (f.type === "boolean" ? `[--${name}]` : `[--${name} ${f.hint ?? "<value>"}]`));
  return [...c.words, ...c.args, ...flags].join(" ");
}
