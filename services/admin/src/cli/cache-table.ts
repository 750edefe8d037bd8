/**
 * The admin `cache` report as plain text: per model and per conversation
 * (newest first), the ledger's model calls with their input tokens, cache
 * reads and writes as the providers reported them, and cached / input: the
 * share of the input the provider served from its cache. The share is shown
 * only when the same calls reported both sums ("-" otherwise, never a guess).
 */
import type { CacheUsageJson } from "../actions/admin-json.ts";

type Field = "inputTokens" | "cacheReadTokens" | "cacheWriteTokens";

function count(value: number): string {
  return value.toLocaleString("en-US");
}

function sumCell(row: CacheUsageJson, field: Field): string {
  const total = row[field];
  const reported = row[`${field}Calls`];
  if (total === undefined || reported === 0) return "-";
  return reported === row.calls ? count(total) : `${count(total)} (${reported}/${row.calls})`;
}

/** cached / input in percent, when the same calls reported both. */
export function cachedShare(row: CacheUsageJson): string {
  if (row.inputTokens === undefined || row.cacheReadTokens === undefined || row.inputTokensCalls !== row.cacheReadTokensCalls) return "-";
  if (row.inputTokens === 0) return "-";
  return `${(Math.floor((row.cacheReadTokens * 10_000) / row.inputTokens) / 100).toFixed(1)}%`;
}

function table(header: string[], rows: string[][], textColumns: number): string {
  const lines = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...lines.map((line) => (line[column] ?? "").length)));
  return lines
    .map((line) =>
      line
        .map((cell, column) => (column < textColumns ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

const SUMS = ["INPUT", "CACHE READ", "CACHE WRITE", "CACHED/INPUT"];

function sums(row: CacheUsageJson): string[] {
  return [sumCell(row, "inputTokens"), sumCell(row, "cacheReadTokens"), sumCell(row, "cacheWriteTokens"), cachedShare(row)];
}

/** Both tables, or "no model calls" when there are none. */
export function formatCacheTables(report: { conversations: readonly CacheUsageJson[]; models: readonly CacheUsageJson[] }): string {
  if (report.models.length === 0) return "no model calls in the range\n";
  const models = table(["MODEL", "CALLS", ...SUMS], report.models.map((r) => [r.key || "-", count(r.calls), ...sums(r)]), 1);
  const conversations = table(
    ["CONVERSATION", "MEMBER", "CALLS", ...SUMS],
    report.conversations.map((r) => [r.key, r.memberId, count(r.calls), ...sums(r)]),
    2,
  );
  return `prompt cache by model\n${models}\n\nprompt cache by conversation (newest first)\n${conversations}\n`;
}
