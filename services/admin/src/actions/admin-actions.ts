/**
 * Every admin action, once: its input (a zod schema: what the API body/query
 * and the CLI flags must turn into) and what it does through the store. The
 * HTTP API (http/api-routes.ts) and the CLI (cli/command-table.ts) are two
 * doors to this table, so an action exists in both or in neither
 * (admin-actions.test.ts checks it). Results are the JSON shapes of
 * admin-json.ts. Every change an action makes is audited by the store itself,
 * in the same transaction (migration 4).
 */
import { z } from "zod";
import { UsageBucket, UsageGroup } from "@byok/contracts";
import type { StoreClient } from "@byok/store-client";
import {
  auditJson,
  budgetJson,
  keyJson,
  ledgerJson,
  limitsJson,
  memberJson,
  memberUsageJson,
  PERIODS,
  purgeJson,
  runJson,
  SCOPES,
  spendPointJson,
  teamJson,
} from "./admin-json.ts";

/** The store operations the admin service and CLI use. */
export type AdminStore = Pick<
  StoreClient,
  | "createMember"
  | "revokeMember"
  | "listMembers"
  | "memberUsage"
  | "getMember"
  | "setMemberTeam"
  | "createTeam"
  | "updateTeam"
  | "getTeam"
  | "deleteTeam"
  | "listTeams"
  | "createMemberKey"
  | "listMemberKeys"
  | "revokeMemberKey"
  | "rotateMemberKey"
  | "setBudget"
  | "deleteBudget"
  | "listBudgets"
  | "getMemberLimits"
  | "setMemberLimits"
  | "listLedger"
  | "spendSeries"
  | "recentRuns"
  | "listAudit"
  | "purgeContent"
>;

export interface AdminAction<S extends z.ZodType = z.ZodType, R = unknown> {
  /** Dotted name, e.g. "member.create". */
  readonly name: string;
  readonly summary: string;
  /** Changes state (the API then needs the CSRF header with a cookie session). */
  readonly mutates: boolean;
  readonly input: S;
  run(store: AdminStore, input: z.infer<S>, now: Date): Promise<R>;
}

function action<S extends z.ZodType, R>(definition: AdminAction<S, R>): AdminAction<S, R> {
  return definition;
}

const id = (what: string) => z.string().trim().min(1, `${what} is required`);
const text = z.string().trim().default("");
/** "" or an RFC 3339 time (the store checks the format); a bare date YYYY-MM-DD is 00:00 UTC. */
const time = z
  .string()
  .trim()
  .default("")
  .transform((v) => (/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v));
/** A whole number from JSON or a CLI flag ("" / null / absent = unset). */
const count = (what: string, options: { min?: number; max?: number } = {}) =>
  z.preprocess(
    (v) => (v === "" || v === null ? undefined : typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v),
    z
      .number({ message: `${what} must be a whole number` })
      .int(`${what} must be a whole number`)
      .min(options.min ?? 1, `${what} must be at least ${options.min ?? 1}`)
      .max(options.max ?? Number.MAX_SAFE_INTEGER)
      .optional(),
  );
const flag = z.preprocess((v) => v === true || v === "1" || v === "true", z.boolean());
/** USD as a decimal (at most 12 fractional digits, as the store keeps it). */
const usd = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).trim().replace(/^\$/, ""))
  .pipe(z.string().regex(/^\d+(\.\d{1,12})?$/, "an amount in USD such as 25 or 7.50"));
/** Model ids, comma-separated in a flag or a list in JSON; null / "all" / [] = every model. */
const modelList = z.preprocess(
  (v) => {
    if (v === undefined) return undefined;
    if (v === null || v === "all" || v === "") return null;
    const list = Array.isArray(v) ? v : String(v).split(",");
    const ids = list.map((m) => String(m).trim()).filter((m) => m !== "");
    return ids.length === 0 ? null : ids;
  },
  z.array(z.string()).nullable().optional(),
);
/** Days, or null / "keep" / 0 for "keep content". */
const retention = z.preprocess(
  (v) => (v === undefined ? undefined : v === null || v === "keep" || v === "" || v === 0 || v === "0" ? null : typeof v === "string" ? Number(v) : v),
  z.number({ message: "retention days must be a whole number of days" }).int().min(1).max(36_500).nullable().optional(),
);
const limit = (fallback: number, max: number) => count("limit", { max }).transform((v) => v ?? fallback);

const DAY_MS = 86_400_000;

const GROUPS = { member: UsageGroup.MEMBER, team: UsageGroup.TEAM, model: UsageGroup.MODEL } as const;
const BUCKETS = { hour: UsageBucket.HOUR, day: UsageBucket.DAY } as const;

/** A spend range: given bounds, else the last 7 days (hour buckets: the last 24 hours) up to the current bucket's end. */
function spendRange(since: string, until: string, bucket: keyof typeof BUCKETS, now: Date): { since: string; until: string } {
  const step = bucket === "hour" ? 3_600_000 : DAY_MS;
  const end = until !== "" ? until : new Date(Math.ceil((now.getTime() + 1) / step) * step).toISOString();
  const start = since !== "" ? since : new Date(Date.parse(end) - (bucket === "hour" ? DAY_MS : 7 * DAY_MS)).toISOString();
  return { since: start, until: end };
}

export const ADMIN_ACTIONS = {
  // ---- Members ----
  listMembers: action({
    name: "member.list",
    summary: "members (with --all also revoked ones)",
    mutates: false,
    input: z.object({ includeRevoked: flag.default(false), teamId: text }),
    async run(store, input) {
      return { members: (await store.listMembers(input.includeRevoked, input.teamId)).map(memberJson) };
    },
  }),
  createMember: action({
    name: "member.create",
    summary: "a member and its first gateway key (shown once)",
    mutates: true,
    input: z.object({ name: z.string().trim().min(1, "name is required").max(200), teamId: text, keyLabel: text, keyExpiresAt: time }),
    async run(store, input) {
      const created = await store.createMember(input.name, { teamId: input.teamId, keyLabel: input.keyLabel, keyExpiresAt: input.keyExpiresAt });
      return { member: memberJson(created.member), key: created.key, keyId: created.keyId };
    },
  }),
  revokeMember: action({
    name: "member.revoke",
    summary: "revoke a member (every key stops working within MEMBER_CACHE_MS)",
    mutates: true,
    input: z.object({ memberId: id("member id") }),
    async run(store, input) {
      return { member: memberJson(await store.revokeMember(input.memberId)) };
    },
  }),
  setMemberTeam: action({
    name: "member.set_team",
    summary: "move a member to another team",
    mutates: true,
    input: z.object({ memberId: id("member id"), teamId: id("team id") }),
    async run(store, input) {
      return { member: memberJson(await store.setMemberTeam(input.memberId, input.teamId)) };
    },
  }),
  memberUsage: action({
    name: "member.usage",
    summary: "runs, provider-reported tokens and cost per member over a time range",
    mutates: false,
    input: z.object({ memberId: text, since: time, until: time }),
    async run(store, input) {
      return { members: (await store.memberUsage({ memberId: input.memberId, since: input.since, until: input.until })).map(memberUsageJson) };
    },
  }),

  // ---- Keys ----
  listKeys: action({
    name: "key.list",
    summary: "a member's keys (with --all also revoked and expired ones)",
    mutates: false,
    input: z.object({ memberId: id("member id"), includeInactive: flag.default(false) }),
    async run(store, input) {
      return { keys: (await store.listMemberKeys(input.memberId, input.includeInactive)).map(keyJson) };
    },
  }),
  createKey: action({
    name: "key.create",
    summary: "another key for a member (shown once), optionally expiring",
    mutates: true,
    input: z.object({ memberId: id("member id"), label: text, expiresAt: time }),
    async run(store, input) {
      const created = await store.createMemberKey({ memberId: input.memberId, label: input.label, expiresAt: input.expiresAt });
      return { key: keyJson(created.key), secret: created.secret };
    },
  }),
  revokeKey: action({
    name: "key.revoke",
    summary: "one key stops working (within MEMBER_CACHE_MS)",
    mutates: true,
    input: z.object({ keyId: id("key id") }),
    async run(store, input) {
      return { key: keyJson(await store.revokeMemberKey(input.keyId)) };
    },
  }),
  rotateKey: action({
    name: "key.rotate",
    summary: "a new key replaces one (the old one stops now, or after --grace-seconds)",
    mutates: true,
    input: z.object({ keyId: id("key id"), expiresAt: time, graceSeconds: count("grace seconds", { min: 0, max: 30 * 86_400 }) }),
    async run(store, input) {
      const rotated = await store.rotateMemberKey({ keyId: input.keyId, expiresAt: input.expiresAt, graceSeconds: input.graceSeconds ?? 0 });
      return { key: keyJson(rotated.key), secret: rotated.secret, previous: keyJson(rotated.previous) };
    },
  }),

  // ---- Teams ----
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
      const team = await store.createTeam({
        name: input.name,
        ...(input.allowedModels ? { allowedModels: { modelIds: input.allowedModels } } : {}),
        ...(input.retentionDays ? { retentionDays: input.retentionDays } : {}),
      });
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
      const team = await store.updateTeam({
        teamId: input.teamId,
        name: input.name ?? current.name,
        ...(allowed ? { allowedModels: { modelIds: allowed } } : {}),
        ...(days ? { retentionDays: days } : {}),
      });
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

  // ---- Runs, spend, ledger ----
  recentRuns: action({
    name: "run.recent",
    summary: "recent runs with status, failure kind, duration, tokens and cost (--running: runs in flight)",
    mutates: false,
    input: z.object({ limit: limit(50, 500), memberId: text, teamId: text, before: time, running: flag.default(false) }),
    async run(store, input) {
      const runs = await store.recentRuns({ limit: input.limit, memberId: input.memberId, teamId: input.teamId, before: input.before, runningOnly: input.running });
      return { runs: runs.map(runJson) };
    },
  }),
  spendSeries: action({
    name: "spend.series",
    summary: "spend and tokens per hour or day, by member, team or model (default: the last 7 days by day)",
    mutates: false,
    input: z.object({
      group: z.enum(["member", "team", "model"]).default("member"),
      bucket: z.enum(["hour", "day"]).default("day"),
      since: time,
      until: time,
      memberId: text,
      teamId: text,
      modelId: text,
    }),
    async run(store, input, now) {
      const range = spendRange(input.since, input.until, input.bucket, now);
      const points = await store.spendSeries({
        groupBy: GROUPS[input.group],
        bucket: BUCKETS[input.bucket],
        since: range.since,
        until: range.until,
        memberId: input.memberId,
        teamId: input.teamId,
        modelId: input.modelId,
      });
      return { group: input.group, bucket: input.bucket, since: range.since, until: range.until, points: points.map(spendPointJson) };
    },
  }),
  listLedger: action({
    name: "ledger.list",
    summary: "ledger rows (one per model call), newest first",
    mutates: false,
    input: z.object({ runId: text, memberId: text, since: time, until: time, limit: limit(100, 1000) }),
    async run(store, input) {
      return { entries: (await store.listLedger(input)).map(ledgerJson) };
    },
  }),

  // ---- Audit and retention ----
  listAudit: action({
    name: "audit.list",
    summary: "the audit log, newest first (--action key. for every key action)",
    mutates: false,
    input: z.object({ since: time, until: time, action: text, memberId: text, limit: limit(100, 1000), beforeId: count("before id", { min: 0 }) }),
    async run(store, input) {
      const entries = await store.listAudit({
        since: input.since,
        until: input.until,
        actionPrefix: input.action,
        memberId: input.memberId,
        limit: input.limit,
        beforeId: BigInt(input.beforeId ?? 0),
      });
      return { entries: entries.map(auditJson) };
    },
  }),
  purgeContent: action({
    name: "retention.purge",
    summary: "run the retention job now: delete conversation content older than each team's retention",
    mutates: true,
    input: z.object({}),
    async run(store) {
      return { purge: purgeJson(await store.purgeContent()) };
    },
  }),
} as const;

export type AdminActions = typeof ADMIN_ACTIONS;
export type AdminActionKey = keyof AdminActions;
export type ActionResult<K extends AdminActionKey> = Awaited<ReturnType<AdminActions[K]["run"]>>;

/** The input did not match the action's schema (HTTP 400, CLI usage error). */
export class ActionInputError extends Error {
  override readonly name = "ActionInputError";
}

/** Validates `raw` against the action's input and runs it. */
export async function runAction<K extends AdminActionKey>(key: K, store: AdminStore, raw: unknown, now: Date = new Date()): Promise<ActionResult<K>> {
  const definition = ADMIN_ACTIONS[key] as unknown as AdminAction<z.ZodType, ActionResult<K>>;
  const parsed = definition.input.safeParse(raw ?? {});
  if (!parsed.success) throw new ActionInputError(parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; "));
  return definition.run(store, parsed.data, now);
}
