/**
 * usage.cache: the share of input the providers served from their prompt
 * cache, per conversation and per model, from the ledger: one row per model
 * call as the provider gateway's accounting settled it, with the tokens
 * exactly as the provider reported them (NULL = not reported). Sums cover
 * only the calls that reported a field (`*_calls`), so the report can tell a
 * share from a guess. A call counts by its start time, with the same range
 * rules as member.usage. Conversations come from the calls' runs; the HTTP
 * front's requests (no run) count only in the model rows. Without accounting
 * (ACCOUNTING=off) there is no ledger and so no report.
 */
import type pg from "pg";
import { query } from "./database.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { parseRfc3339, type Timestamp } from "./rfc3339.ts";

const CACHE_FIELDS = [
  ["inputTokens", "input_tokens"],
  ["cacheReadTokens", "cache_read_tokens"],
  ["cacheWriteTokens", "cache_write_tokens"],
] as const;
type CacheField = (typeof CACHE_FIELDS)[number][0];

export interface CacheUsageFilter {
  readonly memberId: string;
  readonly since: string;
  readonly until: string;
  /** Most conversations to list, newest (by their last call) first. */
  readonly conversationLimit: number;
}

/** A field's sum over the calls that reported it; `total` undefined when none did. */
export interface CallTokenSum {
  readonly total: bigint | undefined;
  readonly calls: number;
}

export interface CacheUsageRow {
  /** Conversation id or model id. */
  readonly key: string;
  /** The conversation's member ("" for model rows). */
  readonly memberId: string;
  readonly calls: number;
  readonly tokens: Readonly<Record<CacheField, CallTokenSum>>;
}

export interface CacheUsage {
  readonly conversations: CacheUsageRow[];
  readonly models: CacheUsageRow[];
}

const DEFAULT_CONVERSATION_LIMIT = 20;

const SUMS = CACHE_FIELDS.map(([field, column]) => `sum(l.${column}) AS "${field}_sum", count(l.${column}) AS "${field}_calls"`).join(",\n       ");

const RANGE = `($1 = '' OR l.member_id = $1)
   AND ($2::timestamptz IS NULL OR l.started_at >= $2::timestamptz)
   AND ($3::timestamptz IS NULL OR l.started_at < $3::timestamptz)`;

const BY_CONVERSATION = `
SELECT r.conversation_id AS key, min(l.member_id) AS member_id, count(*) AS calls, ${SUMS}
  FROM ledger l
  JOIN runs r ON r.id = l.run_id
 WHERE ${RANGE}
 GROUP BY r.conversation_id
 ORDER BY max(l.started_at) DESC, r.conversation_id
 LIMIT $4`;

const BY_MODEL = `
SELECT l.model_id AS key, '' AS member_id, count(*) AS calls, ${SUMS}
  FROM ledger l
 WHERE ${RANGE}
 GROUP BY l.model_id
 ORDER BY l.model_id`;

type SumColumns = { [F in CacheField as `${F}_sum`]: string | null } & { [F in CacheField as `${F}_calls`]: string };
type DbRow = SumColumns & { key: string; member_id: string; calls: string };

function bound(name: "since" | "until", text: string): Outcome<Timestamp | undefined> {
  if (text === "") return ok(undefined);
  const timestamp = parseRfc3339(text);
  return timestamp ? ok(timestamp) : reject("invalid", `${name} is not an RFC 3339 timestamp: ${JSON.stringify(text)}`);
}

function fromDb(row: DbRow): CacheUsageRow {
  const tokens = Object.fromEntries(
    CACHE_FIELDS.map(([field]) => {
      const sum = row[`${field}_sum`];
      return [field, { total: sum === null ? undefined : BigInt(sum), calls: Number(row[`${field}_calls`]) }];
    }),
  ) as Record<CacheField, CallTokenSum>;
  return { key: row.key, memberId: row.member_id, calls: Number(row.calls), tokens };
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
