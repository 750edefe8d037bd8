/**
 * The admin `usage` report as a plain-text table: one line per member, token
 * sums as the providers reported them. A sum that covers only some of the
 * member's runs says so ("300 (2/4)"); a field no run reported is "-", never 0.
 */
import type { MemberUsage } from "@byok/contracts";

type TokenField = "inputTokens" | "outputTokens" | "cacheReadTokens" | "cacheWriteTokens" | "reasoningTokens";

const TOKEN_COLUMNS: ReadonlyArray<readonly [string, TokenField]> = [
  ["INPUT", "inputTokens"],
  ["OUTPUT", "outputTokens"],
  ["CACHE READ", "cacheReadTokens"],
  ["CACHE WRITE", "cacheWriteTokens"],
  ["REASONING", "reasoningTokens"],
];

const HEADER = ["MEMBER", "NAME", "RUNS", "COMPLETED", "FAILED", "CANCELLED", ...TOKEN_COLUMNS.map(([title]) => title)];
/** MEMBER and NAME are left-aligned, the counts right-aligned. */
const TEXT_COLUMNS = 2;

export const USAGE_LEGEND =
  "token sums are provider-reported; n (k/N) = sum over the k of N runs that reported the field; - = no run reported it";

function count(value: number | bigint): string {
  return value.toLocaleString("en-US");
}

function tokenCell(row: MemberUsage, field: TokenField): string {
  const total = row[field];
  const reported = row[`${field}Runs`];
  if (total === undefined || reported === 0) return "-";
  return reported === row.runs ? count(total) : `${count(total)} (${reported}/${row.runs})`;
}

function cells(row: MemberUsage): string[] {
  return [
    row.memberId,
    row.name || "-",
    count(row.runs),
    count(row.completed),
    count(row.failed),
    count(row.cancelled),
    ...TOKEN_COLUMNS.map(([, field]) => tokenCell(row, field)),
  ];
}

/** The table with a header line, then the legend; "no runs" when there are no rows. */
export function formatUsageTable(rows: readonly MemberUsage[]): string {
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
