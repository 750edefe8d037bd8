/**
 * The admin `usage` report as a plain-text table: one line per member, token
 * sums as the providers reported them. SUBAGENTS counts the runs (among RUNS)
 * that another run of the member started through Task. A sum that covers only some of the
 * member's runs says so ("300 (2/4)"); a field no run reported is "-", never 0.
 * COST is the ledger's: the known costs in USD, and how many calls have an
 * unknown cost ("$0.42 +3 unknown"); "-" without accounted calls.
 */
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

function count(value: number | bigint): string {
  return value.toLocaleString("en-US");
}

function tokenCell(row: UsageRow, field: TokenField): string {
  const total = row[field];
  const reported = row[`${field}Runs`];
  if (total === undefined || reported === 0) return "-";
  return reported === row.runs ? count(total) : `${count(total)} (${reported}/${row.runs})`;
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
  const lines = [HEADER, ...rows.map(cells)];
  const widths = HEADER.map((_, column) => Math.max(...lines.map((line) => (line[column] ?? "").length)));
  const text = lines.map((line) =>
    line
      .map((cell, column) => (column < TEXT_COLUMNS ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
  return `${text.join("\n")}\n\n${USAGE_LEGEND}\n`;
}
