import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { CacheUsageRowSchema, MemberUsageSchema, type MemberUsage } from "@byok/contracts";
import { StoreFailure, type CacheUsageFilter, type UsageFilter } from "@byok/store-client";
import type { AdminStore } from "../actions/admin-actions.ts";
import { memoryMembers as membersInMemory, runAdmin, type AdminRun } from "../testing/admin-cli.ts";

/**
 * In-memory stand-in for the store's member operations (the real ones are exercised in
 * tests/admin-cli.test.ts, tests/edge-proxy.test.ts and tests/admin-usage.test.ts).
 * `memberUsage` serves `usageRows` filtered by member, and records each filter it was asked for.
 */
function memoryMembers(usageRows: MemberUsage[] = []): AdminStore & { usageFilters: UsageFilter[] } {
  const usageFilters: UsageFilter[] = [];
  const store = {
    ...membersInMemory(),
    usageFilters,
    async memberUsage(filter: UsageFilter) {
      usageFilters.push(filter);
      if (filter.since === "bad") throw new StoreFailure("invalid", "member.usage", "since is not an RFC 3339 timestamp");
      return usageRows.filter((r) => filter.memberId === "" || r.memberId === filter.memberId);
    },
  };
  return store as unknown as AdminStore & { usageFilters: UsageFilter[] };
}

const WHERE = "nats://127.0.0.1:42229 (bus prefix byok, from test)";

function run(client: AdminStore, ...args: string[]): Promise<AdminRun> {
  return runAdmin(client, args, WHERE);
}

describe("admin command", () => {
  it("creates, lists and revokes members", async () => {
    const client = memoryMembers();
    const created = await run(client, "create", "alice");
    expect(created.code).toBe(0);
    expect(created.out).toContain("gateway key (shown once, store it now): key-m1");
    expect((await run(client, "list")).out).toContain("m1\talice");
    expect((await run(client, "revoke", "m1")).out).toMatch(/revoked: m1\talice.*revoked 2026-01-02/);
    expect((await run(client, "list")).out).toBe("no members\n");
    expect((await run(client, "list", "--all")).out).toContain("m1\talice");
    const missing = await run(client, "revoke", "m9");
    expect(missing.code).toBe(1);
    expect(missing.err).toBe(`admin: not found at ${WHERE}: no member m9\n`);
  });

  it("prints JSON with --json, also for a failure", async () => {
    const client = memoryMembers();
    const created = JSON.parse((await run(client, "create", "alice", "--json")).out) as unknown;
    expect(created).toEqual({ member: { memberId: "m1", name: "alice", teamId: "", createdAt: "2026-01-01T00:00:00Z" }, key: "key-m1", keyId: "k-m1" });
    expect(JSON.parse((await run(client, "list", "--json")).out)).toEqual({ members: [{ memberId: "m1", name: "alice", teamId: "", createdAt: "2026-01-01T00:00:00Z" }] });
    const missing = await run(client, "revoke", "m9", "--json");
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.out)).toMatchObject({ error: { kind: "not_found" } });
  });

  it("names the gateway address when the store does not answer", async () => {
    const client = { ...memoryMembers(), listMembers: async () => Promise.reject(new StoreFailure("unavailable", "member.list", "no_responders: no store is listening")) } as AdminStore;
    const r = await run(client, "list");
    expect(r.code).toBe(1);
    expect(r.err).toBe(`admin: the gateway's store did not answer at ${WHERE}: no_responders: no store is listening\n`);
  });

  it("prints usage for anything else", async () => {
    const client = memoryMembers();
    for (const args of [
      [],
      ["create"],
      ["delete", "x"],
      ["list", "extra"],
      ["create", "a", "b"],
      ["--bogus"],
      ["usage", "m1"],
      ["usage", "--all"],
      ["list", "--since", "2026-01-01"],
      ["revoke", "m1", "--member", "m1"],
      ["usage", "--member"],
    ]) {
      const r = await run(client, ...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/usage:/);
    }
  });

  describe("usage", () => {
    const rows = [
      create(MemberUsageSchema, {
        memberId: "m1",
        name: "alice",
        runs: 4,
        subagentRuns: 1,
        completed: 2,
        failed: 1,
        inputTokens: 1234567n,
        inputTokensRuns: 4,
        outputTokens: 300n,
        outputTokensRuns: 2,
        reasoningTokens: 0n,
        reasoningTokensRuns: 1,
        modelCalls: 5,
        costUsd: "0.4215",
        unknownCostCalls: 2,
      }),
      create(MemberUsageSchema, { memberId: "local", runs: 1, cancelled: 1 }),
    ];

    it("prints one line per member; partial sums say how many runs they cover, unreported fields are '-', never 0", async () => {
      const client = memoryMembers(rows);
      const r = await run(client, "usage");
      expect(r.code).toBe(0);
      expect(client.usageFilters).toEqual([{ memberId: "", since: "", until: "" }]);
      const [header, alice, local] = r.out.split("\n").map((line) => line.trim().split(/\s{2,}/));
      expect(header).toEqual(["MEMBER", "NAME", "RUNS", "SUBAGENTS", "COMPLETED", "FAILED", "CANCELLED", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "REASONING", "COST"]);
      expect(alice).toEqual(["m1", "alice", "4", "1", "2", "1", "0", "1,234,567", "300 (2/4)", "-", "-", "0 (1/4)", "$0.4215 +2 unknown"]);
      expect(local).toEqual(["local", "-", "1", "0", "0", "0", "1", "-", "-", "-", "-", "-", "-"]);
      expect(r.out).toMatch(/- = no run reported it/);
    });

    it("passes the member filter, and a date as 00:00 UTC or a timestamp as given", async () => {
      const client = memoryMembers(rows);
      const r = await run(client, "usage", "--member", "local", "--since", "2026-01-01", "--until", "2026-02-01T12:00:00+01:00");
      expect(r.code).toBe(0);
      expect(client.usageFilters).toEqual([{ memberId: "local", since: "2026-01-01T00:00:00Z", until: "2026-02-01T12:00:00+01:00" }]);
      expect(r.out).toMatch(/^local\s/m);
      expect(r.out).not.toMatch(/alice/);
    });

    it("says when there are no runs, and reports a rejected filter", async () => {
      expect((await run(memoryMembers(), "usage")).out).toBe("no runs\n");
      const rejected = await run(memoryMembers(rows), "usage", "--since", "bad");
      expect(rejected.code).toBe(1);
      expect(rejected.err).toBe(`admin: failed at ${WHERE}: store member.usage: invalid: since is not an RFC 3339 timestamp\n`);
    });
  });

  describe("cache", () => {
    const report = {
      models: [create(CacheUsageRowSchema, { key: "claude", calls: 3, inputTokens: 17245n, inputTokensCalls: 3, cacheReadTokens: 16460n, cacheReadTokensCalls: 3, cacheWriteTokens: 5800n, cacheWriteTokensCalls: 3 })],
      conversations: [create(CacheUsageRowSchema, { key: "conv-1", memberId: "m1", calls: 3, inputTokens: 17245n, inputTokensCalls: 3, cacheReadTokens: 16460n, cacheReadTokensCalls: 2 })],
    };
    function cacheStore(): AdminStore & { filters: CacheUsageFilter[] } {
      const filters: CacheUsageFilter[] = [];
      return { ...memoryMembers(), filters, cacheUsage: async (filter: CacheUsageFilter) => (filters.push(filter), report) } as unknown as AdminStore & { filters: CacheUsageFilter[] };
    }

    it("passes member, range and how many conversations, and prints both tables", async () => {
      const client = cacheStore();
      const r = await run(client, "cache", "--member", "m1", "--since", "2026-01-01", "--conversations", "5");
      expect(r.code).toBe(0);
      expect(client.filters).toEqual([{ memberId: "m1", since: "2026-01-01T00:00:00Z", until: "", conversationLimit: 5 }]);
      expect(r.out.split("\n").find((l) => l.startsWith("claude"))?.split(/\s{2,}/)).toEqual(["claude", "3", "17,245", "16,460", "5,800", "95.4%"]);
      // Cache reads reported by 2 of 3 calls: no share.
      expect(r.out.split("\n").find((l) => l.startsWith("conv-1"))?.split(/\s{2,}/)).toEqual(["conv-1", "m1", "3", "17,245", "16,460 (2/3)", "-", "-"]);
    });

    it("defaults to 20 conversations, prints the rows as JSON with --json, and refuses a bad count", async () => {
      const client = cacheStore();
      const json = JSON.parse((await run(client, "cache", "--json")).out) as { models: unknown[]; conversations: unknown[] };
      expect(client.filters[0]?.conversationLimit).toBe(20);
      expect(json.models).toEqual([{ key: "claude", memberId: "", calls: 3, inputTokens: 17245, inputTokensCalls: 3, cacheReadTokens: 16460, cacheReadTokensCalls: 3, cacheWriteTokens: 5800, cacheWriteTokensCalls: 3 }]);
      expect(json.conversations).toHaveLength(1);
      expect((await run(client, "cache", "--conversations", "many")).code).toBe(2);
    });
  });
});
