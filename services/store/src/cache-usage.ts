/**
 * usage.cache: the share of input the providers served from their prompt
 * cache, per conversation and per model, from runs.usage (each run's summed
 * provider usage, recorded at run.finish). Built on runs.usage because there is
 * no per-call ledger yet; a run whose calls did not all report a field has
 * that field unset, so sums cover only the runs that reported it (`*_runs`).
 * Same range rules as member.usage (a run counts by its start time).
 */
import type pg from "pg";
import { query } from "./database.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { parseRfc3339, type Timestamp } from "./rfc3339.ts";
import type { TokenSum } from "./member-usage.ts";

const CACHE_FIELDS = ["inputTokens", "cacheReadTokens", "cacheWriteTokens"] as const;
type CacheField = (typeof CACHE_FIELDS)[number];

export interface CacheUsageFilter {
  readonly memberId: string;
  readonly since: string;
  readonly until: string;
  /** Most conversations to list, newest (by their last run) first. */
  readonly conversationLimit: number;
}

export interface CacheUsageRow {
  /** Conversation id or model id. */
  readonly key: string;
  /** The conversation's member ("" for model rows). */
  readonly memberId: string;
  readonly runs: number;
  readonly tokens: Readonly<Record<CacheField, TokenSum>>;
}

export interface CacheUsage {
  readonly conversations: CacheUsageRow[];
  readonly models: CacheUsageRow[];
}

const DEFAULT_CONVERSATION_LIMIT = 20;

// Field names are the protobuf JSON names runs.usage is stored with (run-rows.ts usageToJson).
const SUMS = CACHE_FIELDS.map(
  (field) => `sum((r.usage ->> '${field}')::numeric) AS "${field}_sum", count(r.usage -> '${field}') AS "${field}_runs"`,
).join(",\n       ");

const RANGE = `($1 = '' OR r.member_id = $1)
   AND ($2::timestamptz IS NULL OR r.created_at >= $2::timestamptz)
   AND ($3::timestamptz IS NULL OR r.created_at < $3::timestamptz)`;

const BY_CONVERSATION = `
SELECT r.conversation_id AS key, min(r.member_id) AS member_id, count(*) AS runs, ${SUMS}
  FROM runs r
 WHERE ${RANGE}
 GROUP BY r.conversation_id
 ORDER BY max(r.created_at) DESC, r.conversation_id
 LIMIT $4`;

const BY_MODEL = `
SELECT r.model_id AS key, '' AS member_id, count(*) AS runs, ${SUMS}
  FROM runs r
 WHERE ${RANGE}
 GROUP BY r.model_id
 ORDER BY r.model_id`;

type SumColumns = { [F in CacheField as `${F}_sum`]: string | null } & { [F in CacheField as `${F}_runs`]: string };
type DbRow = SumColumns & { key: string; member_id: string; runs: string };

function bound(name: "since" | "until", text: string): Outcome<Timestamp | undefined> {
  if (text === "") return ok(undefined);
  const timestamp = parseRfc3339(text);
  return timestamp ? ok(timestamp) : reject("invalid", `${name} is not an RFC 3339 timestamp: ${JSON.stringify(text)}`);
}

function fromDb(row: DbRow): CacheUsageRow {
  const tokens = Object.fromEntries(
    CACHE_FIELDS.map((field) => {
      const sum = row[`${field}_sum`];
      return [field, { total: sum === null ? undefined : BigInt(sum), runs: Number(row[`${field}_runs`]) }];
    }),
  ) as Record<CacheField, TokenSum>;
  return { key: row.key, memberId: row.member_id, runs: Number(row.runs), tokens };
}

export async function cacheUsage(pool: pg.Pool, filter: CacheUsageFilter): Promise<Outcome<CacheUsage>> {
  const since = bound("since", filter.since);
  if (since.kind !== "ok") return since;
  const until = bound("until", filter.until);
  if (until.kind !== "ok") return until;
  if (since.value && until.value && since.value.epochMicros > until.value.epochMicros) {
    return reject("invalid", `since (${filter.since}) is after until (${filter.until})`);
  }
  const range = [filter.memberId, since.value?.text ?? null, until.value?.text ?? null];
  const limit = filter.conversationLimit > 0 ? filter.conversationLimit : DEFAULT_CONVERSATION_LIMIT;
  const [conversations, models] = await Promise.all([
    query<DbRow>(pool, BY_CONVERSATION, [...range, limit]),
    query<DbRow>(pool, BY_MODEL, range),
  ]);
  return ok({ conversations: conversations.rows.map(fromDb), models: models.rows.map(fromDb) });
}
