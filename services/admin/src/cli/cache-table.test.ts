import { create } from "@bufbuild/protobuf";
import { CacheUsageRowSchema } from "@byok/contracts";
import { describe, expect, it } from "vitest";
import { cachedShare, formatCacheTables } from "./cache-table.ts";

const row = (init: Parameters<typeof create<typeof CacheUsageRowSchema>>[1]) => create(CacheUsageRowSchema, init);

describe("prompt cache report", () => {
  it("shows cached / input when the same runs reported both, and '-' otherwise", () => {
    expect(cachedShare(row({ runs: 2, inputTokens: 2200n, inputTokensRuns: 2, cacheReadTokens: 1800n, cacheReadTokensRuns: 2 }))).toBe("81.8%");
    expect(cachedShare(row({ runs: 2, inputTokens: 2200n, inputTokensRuns: 2, cacheReadTokens: 1800n, cacheReadTokensRuns: 1 }))).toBe("-");
    expect(cachedShare(row({ runs: 1, inputTokens: 400n, inputTokensRuns: 1 }))).toBe("-");
  });

  it("prints a table per model and per conversation, nothing without runs", () => {
    expect(formatCacheTables({ conversations: [], models: [] })).toBe("");
    const text = formatCacheTables({
      models: [row({ key: "claude", runs: 2, inputTokens: 2200n, inputTokensRuns: 2, cacheReadTokens: 1800n, cacheReadTokensRuns: 2, cacheWriteTokens: 250n, cacheWriteTokensRuns: 2 })],
      conversations: [row({ key: "conv-1", memberId: "m1", runs: 2, inputTokens: 2200n, inputTokensRuns: 2, cacheReadTokens: 1800n, cacheReadTokensRuns: 2 })],
    });
    expect(text).toContain("prompt cache by model");
    expect(text.split("\n").find((l) => l.startsWith("claude"))?.split(/\s{2,}/)).toEqual(["claude", "2", "2,200", "1,800", "250", "81.8%"]);
    expect(text.split("\n").find((l) => l.startsWith("conv-1"))?.split(/\s{2,}/)).toEqual(["conv-1", "m1", "2", "2,200", "1,800", "-", "81.8%"]);
  });
});
