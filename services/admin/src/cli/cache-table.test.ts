import { describe, expect, it } from "vitest";
import type { CacheUsageJson } from "../actions/admin-json.ts";
import { cachedShare, formatCacheTables } from "./cache-table.ts";

const row = (init: Partial<CacheUsageJson>): CacheUsageJson => ({ key: "", memberId: "", runs: 0, inputTokensRuns: 0, cacheReadTokensRuns: 0, cacheWriteTokensRuns: 0, ...init });

describe("prompt cache report", () => {
  it("shows cached / input when the same runs reported both, and '-' otherwise", () => {
    expect(cachedShare(row({ runs: 2, inputTokens: 2200, inputTokensRuns: 2, cacheReadTokens: 1800, cacheReadTokensRuns: 2 }))).toBe("81.8%");
    expect(cachedShare(row({ runs: 2, inputTokens: 2200, inputTokensRuns: 2, cacheReadTokens: 1800, cacheReadTokensRuns: 1 }))).toBe("-");
    expect(cachedShare(row({ runs: 1, inputTokens: 400, inputTokensRuns: 1 }))).toBe("-");
  });

  it("prints a table per model and per conversation, 'no runs' without runs", () => {
    expect(formatCacheTables({ conversations: [], models: [] })).toBe("no runs\n");
    const text = formatCacheTables({
      models: [row({ key: "claude", runs: 2, inputTokens: 2200, inputTokensRuns: 2, cacheReadTokens: 1800, cacheReadTokensRuns: 2, cacheWriteTokens: 250, cacheWriteTokensRuns: 2 })],
      conversations: [row({ key: "conv-1", memberId: "m1", runs: 2, inputTokens: 2200, inputTokensRuns: 2, cacheReadTokens: 1800, cacheReadTokensRuns: 2 })],
    });
    expect(text).toContain("prompt cache by model");
    expect(text.split("\n").find((l) => l.startsWith("claude"))?.split(/\s{2,}/)).toEqual(["claude", "2", "2,200", "1,800", "250", "81.8%"]);
    expect(text.split("\n").find((l) => l.startsWith("conv-1"))?.split(/\s{2,}/)).toEqual(["conv-1", "m1", "2", "2,200", "1,800", "-", "81.8%"]);
  });
});
