/**
 * Reading the ledger for the admin page and CLI: the rows themselves
 * (ledger.list), spend and tokens per hour or day by member, team or model
 * (ledger.series), and recent runs with their cost (run.recent). Sums of
 * money cover the calls whose cost is known; `unknownCostCalls` says how many
 * are not in them. A token sum covers the calls that reported the field.
 */
import { formatUsd, parseUsd } from "@byok/platform";
import { query, type Queryable } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { parseRfc3339 } from "../rfc3339.ts";
import { RUN_COLUMNS, runFromDb, type RunDbRow, type RunRow } from "../run-rows.ts";
import { isUuid } from "./uuid.ts";

export interface TokenTotal {
  readonly total: bigint | undefined;
  readonly reportedCalls: number;
}

export const TOKEN_COLUMNS = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"] as const;
export type TokenColumn = (typeof TOKEN_COLUMNS)[number];

export interface LedgerRow {
  readonly callRef: string;
  readonly attempt: number;
  readonly memberId: string;
  readonly teamId: string;
  readonly clientKind: string;
  readonly modelId: string;
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly runId: string | null;
  readonly callIndex: number | null;
  readonly requestId: string | null;
  readonly outcome: string;
  readonly tokens: Readonly<Record<TokenColumn, bigint | undefined>>;
  readonly costUsd: string | undefined;
  readonly chargedUsd: string | undefined;
  readonly startedAt: Date;
  readonly settledAt: Date;
}

type LedgerDbRow = { [C in TokenColumn]: string | null } & {
  call_ref: string;
  attempt: number;
  member_id: string;
  team_id: string;
  client_kind: string;
  model_id: string;
  provider_id: string;
  upstream_model: string;
  run_id: string | null;
  call_index: number | null;
  request_id: string | null;
  outcome: string;
  cost_usd: string | null;
  charged_usd: string | null;
  started_at: Date;
  settled_at: Date;
};

function money(value: string | null): string | undefined {
  return value === null ? undefined : formatUsd(parseUsd(value) ?? 0n);
}

function ledgerFromDb(row: LedgerDbRow): LedgerRow {
  const tokens = Object.fromEntries(TOKEN_COLUMNS.map((c) => [c, row[c] === null ? undefined : BigInt(row[c])])) as Record<TokenColumn, bigint | undefined>;
  return {
    callRef: row.call_ref,
    attempt: row.attempt,
    memberId: row.member_id,
    teamId: row.team_id,
    clientKind: row.client_kind,
    modelId: row.model_id,
    providerId: row.provider_id,
    upstreamModel: row.upstream_model,
    runId: row.run_id,
    callIndex: row.call_index,
    requestId: row.request_id,
    outcome: row.outcome,
    tokens,
    costUsd: money(row.cost_usd),
    chargedUsd: money(row.charged_usd),
    startedAt: row.started_at,
    settledAt: row.settled_at,
  };
}

function timestampOrEmpty(name: string, text: string): Outcome<string | null> {
  if (text === "") return ok(null);
  const parsed = parseRfc3339(text);
  return parsed ? ok(parsed.text) : reject("invalid", `${name} is not an RFC 3339 timestamp: ${JSON.stringify(text)}`);
}

export interface LedgerFilter {
  readonly runId: string;
  readonly memberId: string;
  readonly since: string;
  readonly until: string;
  readonly limit: number;
}

/** Newest first. */
export async function listLedger(db: Queryable, filter: LedgerFilter): Promise<Outcome<LedgerRow[]>> {
  const since = timestampOrEmpty("since", filter.since);
  if (since.kind !== "ok") return since;
  const until = timestampOrEmpty("until", filter.until);
  if (until.kind !== "ok") return until;
  const limit = Math.min(filter.limit === 0 ? 100 : filter.limit, 1000);
  const result = await query<LedgerDbRow>(
    db,
    `SELECT * FROM ledger
      WHERE ($1 = '' OR run_id = $1) AND ($2 = '' OR member_id = $2)
        AND ($3::timestamptz IS NULL OR started_at >= $3) AND ($4::timestamptz IS NULL OR started_at < $4)
      ORDER BY started_at DESC, id DESC LIMIT $5`,
    [filter.runId, filter.memberId, since.value, until.value, limit],
  );
  return ok(result.rows.map(ledgerFromDb));
}

export type UsageGroup = "member" | "team" | "model" | "client";
export type UsageBucket = "hour" | "day";

export interface SeriesFilter {
  readonly groupBy: UsageGroup;
  readonly bucket: UsageBucket;
  readonly since: string;
  readonly until: string;
  readonly memberId: string;
  readonly teamId: string;
  readonly modelId: string;
}

export interface SpendPointRow {
  readonly bucketStart: Date;
  readonly key: string;
  readonly calls: number;
  readonly costUsd: string;
  readonly unknownCostCalls: number;
  readonly tokens: Readonly<Record<TokenColumn, TokenTotal>>;
}

const MAX_BUCKETS = 2_000;
const BUCKET_MS: Record<UsageBucket, number> = { hour: 3_600_000, day: 86_400_000 };
const GROUP_COLUMN: Record<UsageGroup, string> = { member: "member_id", team: "team_id::text", model: "model_id", client: "client_kind" };

export async function spendSeries(db: Queryable, filter: SeriesFilter): Promise<Outcome<SpendPointRow[]>> {
  const since = parseRfc3339(filter.since);
  const until = parseRfc3339(filter.until);
  if (!since || !until) return reject("invalid", "since and until are required RFC 3339 timestamps");
  if (since.epochMicros >= until.epochMicros) return reject("invalid", "since must be before until");
  const buckets = Number((until.epochMicros - since.epochMicros) / 1000n) / BUCKET_MS[filter.bucket];
  if (buckets > MAX_BUCKETS) return reject("invalid", `the range covers ${Math.ceil(buckets)} ${filter.bucket}s; at most ${MAX_BUCKETS}`);
  const tokenSelects = TOKEN_COLUMNS.map((c) => `sum(${c}) AS "${c}_sum", count(${c}) AS "${c}_calls"`).join(", ");
  const result = await query<Record<string, string | Date | null>>(
    db,
    `SELECT date_trunc('${filter.bucket}', started_at, 'UTC') AS bucket_start, ${GROUP_COLUMN[filter.groupBy]} AS key,
            count(*) AS calls, coalesce(sum(cost_usd), 0) AS cost, count(*) FILTER (WHERE cost_usd IS NULL) AS unknown,
            ${tokenSelects}
       FROM ledger
      WHERE started_at >= $1 AND started_at < $2
        AND ($3 = '' OR member_id = $3) AND ($4 = '' OR team_id::text = $4) AND ($5 = '' OR model_id = $5)
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [since.text, until.text, filter.memberId, filter.teamId, filter.modelId],
  );
  return ok(
    result.rows.map((row) => ({
      bucketStart: row["bucket_start"] as Date,
      key: String(row["key"]),
      calls: Number(row["calls"]),
      costUsd: formatUsd(parseUsd(String(row["cost"])) ?? 0n),
      unknownCostCalls: Number(row["unknown"]),
      tokens: Object.fromEntries(
        TOKEN_COLUMNS.map((c) => {
          const sum = row[`${c}_sum`];
          return [c, { total: sum === null || sum === undefined ? undefined : BigInt(String(sum)), reportedCalls: Number(row[`${c}_calls`]) }];
        }),
      ) as Record<TokenColumn, TokenTotal>,
    })),
  );
}

export interface RecentRunsFilter {
  readonly limit: number;
  readonly memberId: string;
  readonly teamId: string;
  readonly before: string;
  readonly runningOnly: boolean;
}

export interface RunSpendRow {
  readonly run: RunRow;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
  readonly teamId: string;
  readonly modelCalls: number;
  readonly costUsd: string;
  readonly unknownCostCalls: number;
}

/** Newest first; a run's team is that of its ledger rows, else its member's team now. */
export async function recentRuns(db: Queryable, filter: RecentRunsFilter): Promise<Outcome<RunSpendRow[]>> {
  const before = timestampOrEmpty("before", filter.before);
  if (before.kind !== "ok") return before;
  if (filter.teamId !== "" && !isUuid(filter.teamId)) return ok([]);
  const limit = Math.min(filter.limit === 0 ? 50 : filter.limit, 500);
  const columns = RUN_COLUMNS.split(",")
    .map((c) => `r.${c.trim()}`)
    .join(", ");
  const result = await query<RunDbRow & { created_at: Date; finished_at: Date | null; team: string | null; calls: string; cost: string; unknown: string }>(
    db,
    `SELECT ${columns}, r.created_at, r.finished_at,
            coalesce(l.team, m.team_id::text) AS team, coalesce(l.calls, 0) AS calls, coalesce(l.cost, 0) AS cost, coalesce(l.unknown, 0) AS unknown
       FROM runs r
       LEFT JOIN members m ON m.id::text = r.member_id
       LEFT JOIN LATERAL (
         SELECT max(team_id::text) AS team, count(*) AS calls, sum(cost_usd) AS cost, count(*) FILTER (WHERE cost_usd IS NULL) AS unknown
           FROM ledger WHERE run_id = r.id
       ) l ON true
      WHERE ($1 = '' OR r.member_id = $1)
        AND ($2 = '' OR coalesce(l.team, m.team_id::text) = $2)
        AND ($3::timestamptz IS NULL OR r.created_at < $3)
        AND (NOT $4 OR r.status = 'running')
      ORDER BY r.created_at DESC, r.id DESC LIMIT $5`,
    [filter.memberId, filter.teamId, before.value, filter.runningOnly, limit],
  );
  return ok(
    result.rows.map((row) => ({
      run: runFromDb(row),
      startedAt: row.created_at,
      finishedAt: row.finished_at,
      teamId: row.team ?? "",
      modelCalls: Number(row.calls),
      costUsd: formatUsd(parseUsd(String(row.cost)) ?? 0n),
      unknownCostCalls: Number(row.unknown),
    })),
  );
}
