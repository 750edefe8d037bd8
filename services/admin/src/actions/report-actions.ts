/** Admin actions that read what happened: runs, spend, prompt cache, ledger, audit log; and the retention job (admin-actions.ts has the whole table). */
import { z } from "zod";
import { UsageBucket, UsageGroup } from "@byok/contracts";
import { action, count, flag, limit, text, time } from "./admin-action.ts";
import { auditJson, cacheUsageJson, ledgerJson, purgeJson, runJson, spendPointJson } from "./admin-json.ts";

const DAY_MS = 86_400_000;

const GROUPS = { member: UsageGroup.MEMBER, team: UsageGroup.TEAM, model: UsageGroup.MODEL, client: UsageGroup.CLIENT } as const;
const BUCKETS = { hour: UsageBucket.HOUR, day: UsageBucket.DAY } as const;

/** A spend range: given bounds, else the last 7 days (hour buckets: the last 24 hours) up to the current bucket's end. */
function spendRange(since: string, until: string, bucket: keyof typeof BUCKETS, now: Date): { since: string; until: string } {
  const step = bucket === "hour" ? 3_600_000 : DAY_MS;
  const end = until !== "" ? until : new Date(Math.ceil((now.getTime() + 1) / step) * step).toISOString();
  const start = since !== "" ? since : new Date(Date.parse(end) - (bucket === "hour" ? DAY_MS : 7 * DAY_MS)).toISOString();
  return { since: start, until: end };
}

export const REPORT_ACTIONS = {
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
    summary: "spend and tokens per hour or day, by member, team, model or client kind (default: the last 7 days by day)",
    mutates: false,
    input: z.object({
      group: z.enum(["member", "team", "model", "client"]).default("member"),
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
  cacheUsage: action({
    name: "usage.cache",
    summary: "prompt cache from the ledger: input tokens, cache reads and writes per model and per conversation (newest first)",
    mutates: false,
    input: z.object({ memberId: text, since: time, until: time, conversations: limit(20, 500) }),
    async run(store, input) {
      const report = await store.cacheUsage({ memberId: input.memberId, since: input.since, until: input.until, conversationLimit: input.conversations });
      return { models: report.models.map(cacheUsageJson), conversations: report.conversations.map(cacheUsageJson) };
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
