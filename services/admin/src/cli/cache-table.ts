/**
 * The admin `cache` report as plain text: per model and per conversation
 * (newest first), the ledger's model calls with their input tokens, cache
 * reads and writes as the providers reported them, and cached / input: the
 * share of the input the provider served from its cache. The share is shown
 * only when the same calls reported both sums ("-" otherwise, never a guess).
 */
import type { CacheUsageJson } from "../actions/admin-json.ts";
import { alignedTable, count, reportedSum } from "./text-table.ts";

type Field = "inputTokens" | "cacheReadTokens" | "cacheWriteTokens";

function sumCell(row: CacheUsageJson, field: Field): string {
  return reportedSum(row[field], row[`${field}Calls`], row.calls);
}

/** cached / input in percent, when the same calls reported both. */
export function cachedShare(row: CacheUsageJson): string {
  if (row.inputTokens === undefined || row.cacheReadTokens === undefined || row.inputTokensCalls !== row.cacheReadTokensCalls) return "-";
  if (row.inputTokens === 0) return "-";
  return `${(Math.floor((row.cacheReadTokens * 10_000) / row.inputTokens) / 100).toFixed(1)}%`;
}

const SUMS = ["INPUT", "CACHE READ", "CACHE WRITE", "CACHED/INPUT"];

function sums(row: CacheUsageJson): string[] {
  return [sumCell(row, "inputTokens"), sumCell(row, "cacheReadTokens"), sumCell(row, "cacheWriteTokens"), cachedShare(row)];
}

/** Both tables, or "no model calls" when there are none. */
export function formatCacheTables(report: { conversations: readonly CacheUsageJson[]; models: readonly CacheUsageJson[] }): string {
  if (report.models.length === 0) return "no model calls in the range\n";
  const models = alignedTable(["MODEL", "CALLS", ...SUMS], report.models.map((r) => [r.key || "-", count(r.calls), ...sums(r)]), 1);
  const conversations = alignedTable(
    ["CONVERSATION", "MEMBER", "CALLS", ...SUMS],
    report.conversations.map((r) => [r.key, r.memberId, count(r.calls), ...sums(r)]),
    2,
  );
  return `prompt cache by model\n${models}\n\nprompt cache by conversation (newest first)\n${conversations}\n`;
}
