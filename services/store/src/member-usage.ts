/**
 * member.usage: per-member totals over the runs table, from the usage the
 * providers reported (runs.usage, protobuf JSON of byok.v1.Usage, uint64 as
 * strings). A token field is summed only over the runs that reported it, and
 * each sum says how many runs that was: a field no run reported stays unknown
 * (undefined), never 0. Cost comes from the ledger: the member's model calls
 * that started in the range, summed over the calls with a known cost (the
 * others are counted, never taken as 0).
 */
import type pg from "pg";
import { formatUsd, parseUsd } from "@byok/platform";
import { query } from "./database.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { parseRfc3339, type Timestamp } from "./rfc3339.ts";

export interface UsageFilter {
  /** "" = every member. */
  readonly memberId: string;
  /** RFC 3339; "" = unbounded. Runs that began at or after `since` and before `until`. */
  readonly since: string;
  readonly until: string;
}

/** A sum over the runs that reported the field; `total` is undefined when `runs` is 0. */
export interface TokenSum {
  readonly total: bigint | undefined;
  readonly runs: number;
}

export const TOKEN_FIELDS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const;
export type TokenField = (typeof TOKEN_FIELDS)[number];

export interface MemberUsageRow {
  readonly memberId: string;
  /** "" when the member has no member record (e.g. "local"). */
  readonly name: string;
  readonly runs: number;
  readonly completed: number;
  readonly failed: number;
  readonly cancelled: number;
  /** Runs started by another run's Task (sub-agents); they are counted in `runs` too. */
  readonly subagentRuns: number;
  readonly tokens: Readonly<Record<TokenField, TokenSum>>;
  /** From the ledger. */
  readonly modelCalls: number;
  readonly costUsd: string;
  readonly unknownCostCalls: number;
}

type TokenColumns = { [F in TokenField as `${F}_sum`]: string | null } & { [F in TokenField as `${F}_runs`]: string };

type MemberUsageDbRow = TokenColumns & {
  member_id: string;
  name: string | null;
  runs: string;
  completed: string;
  failed: string;
  cancelled: string;
  subagent_runs: string;
};

// Field names are the protobuf JSON names runs.usage is stored with (run-rows.ts usageToJson).
const TOKEN_SELECTS = TOKEN_FIELDS.map(
  (field) => `sum((r.usage ->> '${field}')::numeric) AS "${field}_sum", count(r.usage -> '${field}') AS "${field}_runs"`,
).join(",\n       ");

const USAGE_SQL = `
SELECT r.member_id, m.name,
       count(*) AS runs,
       count(*) FILTER (WHERE r.status = 'completed') AS completed,
       count(*) FILTER (WHERE r.status = 'failed') AS failed,
       count(*) FILTER (WHERE r.status = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE r.parent_run_id IS NOT NULL) AS subagent_runs,
       ${TOKEN_SELECTS}
  FROM runs r
  LEFT JOIN members m ON m.id::text = r.member_id
 WHERE ($1 = '' OR r.member_id = $1)
   AND ($2::timestamptz IS NULL OR r.created_at >= $2::timestamptz)
   AND ($3::timestamptz IS NULL OR r.created_at < $3::timestamptz)
 GROUP BY r.member_id, m.name
 ORDER BY r.member_id`;

const COST_SQL = `
SELECT member_id, count(*) AS calls, coalesce(sum(cost_usd), 0) AS cost, count(*) FILTER (WHERE cost_usd IS NULL) AS unknown
  FROM ledger
 WHERE ($1 = '' OR member_id = $1)
   AND ($2::timestamptz IS NULL OR started_at >= $2::timestamptz)
   AND ($3::timestamptz IS NULL OR started_at < $3::timestamptz)
 GROUP BY member_id`;

interface CostDbRow {
  member_id: string;
  calls: string;
  cost: string;
  unknown: string;
}

function bound(name: "since" | "until", text: string): Outcome<Timestamp | undefined> {
  if (text === "") return ok(undefined);
  const timestamp = parseRfc3339(text);
  return timestamp ? ok(timestamp) : reject("invalid", `${name} is not an RFC 3339 timestamp: ${JSON.stringify(text)}`);
}

function fromDb(row: MemberUsageDbRow, cost: CostDbRow | undefined): MemberUsageRow {
  const tokens = Object.fromEntries(
    TOKEN_FIELDS.map((field) => {
      const sum = row[`${field}_sum`];
      return [field, { total: sum === null ? undefined : BigInt(sum), runs: Number(row[`${field}_runs`]) }];
    }),
  ) as Record<TokenField, TokenSum>;
  return {
    memberId: row.member_id,
    name: row.name ?? "",
    runs: Number(row.runs),
    completed: Number(row.completed),
    failed: Number(row.failed),
    cancelled: Number(row.cancelled),
    subagentRuns: Number(row.subagent_runs),
    tokens,
    modelCalls: Number(cost?.calls ?? 0),
    costUsd: formatUsd(parseUsd(cost?.cost ?? "0") ?? 0n),
    unknownCostCalls: Number(cost?.unknown ?? 0),
  };
}

/** One row per member with at least one run in the range, ordered by member id. */
export async function memberUsage(pool: pg.Pool, filter: UsageFilter): Promise<Outcome<MemberUsageRow[]>> {
  const since = bound("since", filter.since);
  if (since.kind !== "ok") return since;
  const until = bound("until", filter.until);
  if (until.kind !== "ok") return until;
  if (since.value && until.value && since.value.epochMicros > until.value.epochMicros) {
    return reject("invalid", `since (${filter.since}) is after until (${filter.until})`);
  }
  const params = [filter.memberId, since.value?.text ?? null, until.value?.text ?? null];
  const result = await query<MemberUsageDbRow>(pool, USAGE_SQL, params);
  const costs = new Map((await query<CostDbRow>(pool, COST_SQL, params)).rows.map((row) => [row.member_id, row]));
  return ok(result.rows.map((row) => fromDb(row, costs.get(row.member_id))));
}
