import { describe, expect, it } from "vitest";
import type { CacheUsageJson } from "../actions/admin-json.ts";
import { cachedShare, formatCacheTables } from "./cache-table.ts";

const row = (init: Partial<CacheUsageJson>): CacheUsageJson => ({ key: "", memberId: "", calls: 0, inputTokensCalls: 0, cacheReadTokensCalls: 0, cacheWriteTokensCalls: 0, ...init });

describe("prompt cache report", () => {
  it("shows cached / input when the same calls reported both, and '-' otherwise", () => {
    expect(cachedShare(row({ calls: 2, inputTokens: 2200, inputTokensCalls: 2, cacheReadTokens: 1800, cacheReadTokensCalls: 2 }))).toBe("81.8%");
    expect(cachedShare(row({ calls: 2, inputTokens: 2200, inputTokensCalls: 2, cacheReadTokens: 1800, cacheReadTokensCalls: 1 }))).toBe("-");
    expect(cachedShare(row({ calls: 1, inputTokens: 400, inputTokensCalls: 1 }))).toBe("-");
  });

  it("prints a table per model and per conversation, 'no model calls' without any", () => {
    expect(formatCacheTables({ conversations: [], models: [] })).toBe("no model calls in the range\n");
    const text = formatCacheTables({
      models: [row({ key: "claude", calls: 2, inputTokens: 2200, inputTokensCalls: 2, cacheReadTokens: 1800, cacheReadTokensCalls: 2, cacheWriteTokens: 250, cacheWriteTokensCalls: 2 })],
      conversations: [row({ key: "conv-1", memberId: "m1", calls: 2, inputTokens: 2200, inputTokensCalls: 2, cacheReadTokens: 1800, cacheReadTokensCalls: 2 })],
    });
    expect(text).toContain("prompt cache by model");
    expect(text.split("\n").find((l) => l.startsWith("claude"))?.split(/\s{2,}/)).toEqual(["claude", "2", "2,200", "1,800", "250", "81.8%"]);
    expect(text.split("\n").find((l) => l.startsWith("conv-1"))?.split(/\s{2,}/)).toEqual(["conv-1", "m1", "2", "2,200", "1,800", "-", "81.8%"]);
  });
});
