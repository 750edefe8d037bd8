/**
 * The admin `usage` report as a plain-text table: one line per member, token
 * sums as the providers reported them. SUBAGENTS counts the runs (among RUNS)
 * that another run of the member started through Task. A sum that covers only some of the
 * member's runs says so ("300 (2/4)"); a field no run reported is "-", never 0.
 * COST is the ledger's: the known costs in USD, and how many calls have an
 * unknown cost ("$0.42 +3 unknown"); "-" without accounted calls.
 */
import { alignedTable, count, reportedSum } from "./text-table.ts";

type TokenField = "inputTokens" | "outputTokens" | "cacheReadTokens" | "cacheWriteTokens" | "reasoningTokens";

/** A member.usage row as the admin action returns it (the store's MemberUsage, int64 sums as numbers). */
export type UsageRow = {
  readonly memberId: string;
  readonly name: string;
  readonly runs: number;
  readonly subagentRuns: number;
  readonly completed: number;
  readonly failed: number;
  readonly cancelled: number;
  readonly modelCalls: number;
  readonly costUsd: string;
  readonly unknownCostCalls: number;
} & { readonly [F in TokenField]?: number | bigint } & { readonly [F in `${TokenField}Runs`]: number };

const TOKEN_COLUMNS: ReadonlyArray<readonly [string, TokenField]> = [
  ["INPUT", "inputTokens"],
  ["OUTPUT", "outputTokens"],
  ["CACHE READ", "cacheReadTokens"],
  ["CACHE WRITE", "cacheWriteTokens"],
  ["REASONING", "reasoningTokens"],
];

const HEADER = ["MEMBER", "NAME", "RUNS", "SUBAGENTS", "COMPLETED", "FAILED", "CANCELLED", ...TOKEN_COLUMNS.map(([title]) => title), "COST"];
/** MEMBER and NAME are left-aligned, the counts right-aligned. */
const TEXT_COLUMNS = 2;

export const USAGE_LEGEND =
  "token sums are provider-reported; n (k/N) = sum over the k of N runs that reported the field; - = no run reported it; cost: known costs, +n unknown = calls whose cost is unknown";

function tokenCell(row: UsageRow, field: TokenField): string {
  return reportedSum(row[field], row[`${field}Runs`], row.runs);
}

function costCell(row: UsageRow): string {
  if (row.modelCalls === 0) return "-";
  const known = `$${row.costUsd || "0"}`;
  return row.unknownCostCalls === 0 ? known : `${known} +${row.unknownCostCalls} unknown`;
}

function cells(row: UsageRow): string[] {
  return [
    row.memberId,
    row.name || "-",
    count(row.runs),
    count(row.subagentRuns),
    count(row.completed),
    count(row.failed),
    count(row.cancelled),
    ...TOKEN_COLUMNS.map(([, field]) => tokenCell(row, field)),
    costCell(row),
  ];
}

/** The table with a header line, then the legend; "no runs" when there are no rows. */
export function formatUsageTable(rows: readonly UsageRow[]): string {
  if (rows.length === 0) return "no runs\n";
  return `${alignedTable(HEADER, rows.map(cells), TEXT_COLUMNS)}\n\n${USAGE_LEGEND}\n`;
}
