/**
 * Budgets, limits and the ledger queries the admin page and CLI use: budgets
 * are set (created or replaced), listed with what their window was charged,
 * deleted; limits are replaced as a whole; spend and tokens come out per
 * hour/day and member/team/model with unknown costs counted, never as 0;
 * recent runs carry their cost; member.usage gains the ledger's cost.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BudgetPeriod, BudgetScope, DEFAULT_TEAM_ID, RunStatus, StoreErrorKind, UsageBucket, UsageGroup } from "@byok/contracts";
import { startTestStore, userText, type TestStore } from "../store-test-harness.ts";

describe("budgets, limits and ledger queries", () => {
  let store: TestStore;
  let clock: Date;
  let ada: string;
  let bob: string;
  let teamId: string;
  let tickets = 0;

  beforeEach(async () => {
    clock = new Date("2026-05-06T10:30:00.000Z");
    store = await startTestStore({ now: () => clock });
    teamId = (await store.call("createTeam", { name: "core" })).team!.teamId;
    ada = (await store.call("createMember", { name: "ada", teamId })).member!.memberId;
    bob = (await store.call("createMember", { name: "bob" })).member!.memberId;
  });
  afterEach(() => store.close());

  async function call(memberId: string, team: string, model: string, startedAt: string, costUsd: string | undefined, tokens: { input?: bigint; output?: bigint; cacheRead?: bigint }, runId = "") {
    tickets += 1;
    const settled = await store.call("settleCall", {
      ticketId: `00000000-0000-4000-8000-${String(tickets).padStart(12, "0")}`,
      entry: {
        callRef: runId === "" ? `request:r${tickets}` : `run:${runId}:${tickets}`,
        memberId,
        teamId: team,
        clientKind: runId === "" ? "openai-api" : "cursor",
        modelId: model,
        providerId: "p",
        upstreamModel: "u",
        ...(runId === "" ? { requestId: `r${tickets}` } : { runId, callIndex: tickets }),
        usage: { inputTokens: tokens.input, outputTokens: tokens.output, cacheReadTokens: tokens.cacheRead },
        ...(costUsd === undefined ? {} : { costUsd, chargedUsd: costUsd }),
        startedAt,
        outcome: "ok",
      },
    });
    expect(settled.error).toBeUndefined();
  }

  it("sets a budget once per target, model and period, lists it with its window's charge, and deletes it", async () => {
    const set = await store.call("setBudget", { scope: BudgetScope.MEMBER, memberId: ada, period: BudgetPeriod.WEEKLY, limitUsd: "10.50" });
    expect(set.budget).toMatchObject({ limitUsd: "10.5", windowStart: "2026-05-04T00:00:00.000Z", windowEnd: "2026-05-11T00:00:00.000Z", chargedUsd: "0" });
    const replaced = await store.call("setBudget", { scope: BudgetScope.MEMBER, memberId: ada, period: BudgetPeriod.WEEKLY, limitUsd: "20" });
    expect(replaced.budget?.budgetId).toBe(set.budget?.budgetId);
    await store.call("setBudget", { scope: BudgetScope.TEAM, teamId, period: BudgetPeriod.MONTHLY, limitUsd: "100", modelId: "gpt" });
    await store.call("setBudget", { scope: BudgetScope.MEMBER, memberId: bob, period: BudgetPeriod.DAILY, limitUsd: "1" });

    await call(ada, teamId, "gpt", "2026-05-05T09:00:00Z", "1.25", { input: 10n, output: 2n });
    await call(ada, teamId, "gpt", "2026-05-06T09:00:00Z", undefined, { input: 10n });
    await call(ada, teamId, "other", "2026-05-03T23:59:59Z", "7", { input: 1n, output: 1n });

    const adas = await store.call("listBudgets", { memberId: ada });
    expect(adas.budgets.map((b) => [b.scope, b.modelId, b.chargedUsd, b.unknownCostCalls])).toEqual([
      [BudgetScope.TEAM, "gpt", "1.25", 1],
      [BudgetScope.MEMBER, "", "1.25", 1],
    ]);
    expect((await store.call("listBudgets", {})).budgets).toHaveLength(3);
    expect((await store.call("listBudgets", { teamId })).budgets).toHaveLength(1);

    expect((await store.call("setBudget", { scope: BudgetScope.MEMBER, memberId: ada, period: BudgetPeriod.DAILY, limitUsd: "-1" })).error?.kind).toBe(StoreErrorKind.INVALID);
    expect((await store.call("setBudget", { scope: BudgetScope.TEAM, teamId: "nope", period: BudgetPeriod.DAILY, limitUsd: "1" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("setBudget", { scope: BudgetScope.MEMBER, memberId: ada, limitUsd: "1" })).error?.kind).toBe(StoreErrorKind.INVALID);
    expect((await store.call("deleteBudget", { budgetId: set.budget!.budgetId })).error).toBeUndefined();
    expect((await store.call("deleteBudget", { budgetId: set.budget!.budgetId })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
  });

  it("replaces a member's limits as a whole and refuses zero", async () => {
    expect((await store.call("getMemberLimits", { memberId: ada })).limits).toEqual(expect.objectContaining({ memberId: ada }));
    const set = await store.call("setMemberLimits", { limits: { memberId: ada, requestsPerMinute: 60, tokensPerMinute: 100_000n, concurrentRuns: 3 } });
    expect(set.limits).toMatchObject({ requestsPerMinute: 60, tokensPerMinute: 100_000n, concurrentRuns: 3 });
    const cleared = await store.call("setMemberLimits", { limits: { memberId: ada, concurrentRuns: 1 } });
    expect(cleared.limits?.requestsPerMinute).toBeUndefined();
    expect(cleared.limits?.concurrentRuns).toBe(1);
    expect((await store.call("setMemberLimits", { limits: { memberId: ada, requestsPerMinute: 0 } })).error?.kind).toBe(StoreErrorKind.INVALID);
    expect((await store.call("getMemberLimits", { memberId: "local" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
  });

  it("reports spend and tokens per bucket and key, counting unknown costs apart", async () => {
    await call(ada, teamId, "gpt", "2026-05-06T09:10:00Z", "0.5", { input: 100n, output: 10n, cacheRead: 40n });
    await call(ada, teamId, "gpt", "2026-05-06T09:50:00Z", undefined, { input: 50n });
    await call(bob, DEFAULT_TEAM_ID, "claude", "2026-05-06T09:20:00Z", "0.25", { input: 7n, output: 3n });
    await call(ada, teamId, "claude", "2026-05-06T10:05:00Z", "1", { input: 1n, output: 1n });

    const byMember = await store.call("spendSeries", { groupBy: UsageGroup.MEMBER, bucket: UsageBucket.HOUR, since: "2026-05-06T09:00:00Z", until: "2026-05-06T11:00:00Z" });
    expect(byMember.points.map((p) => [p.bucketStart, p.key, p.calls, p.costUsd, p.unknownCostCalls])).toEqual(
      [
        ["2026-05-06T09:00:00.000Z", ada, 2, "0.5", 1],
        ["2026-05-06T09:00:00.000Z", bob, 1, "0.25", 0],
        ["2026-05-06T10:00:00.000Z", ada, 1, "1", 0],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(a[1]).localeCompare(String(b[1]))),
    );
    const adaNine = byMember.points.find((p) => p.key === ada && p.bucketStart.startsWith("2026-05-06T09"));
    expect(adaNine?.inputTokens).toMatchObject({ total: 150n, reportedCalls: 2 });
    expect(adaNine?.outputTokens).toMatchObject({ total: 10n, reportedCalls: 1 });
    expect(adaNine?.cacheReadTokens).toMatchObject({ total: 40n, reportedCalls: 1 });
    expect(adaNine?.reasoningTokens?.total).toBeUndefined();

    const byModel = await store.call("spendSeries", { groupBy: UsageGroup.MODEL, bucket: UsageBucket.DAY, since: "2026-05-06T00:00:00Z", until: "2026-05-07T00:00:00Z" });
    expect(byModel.points.map((p) => [p.key, p.costUsd, p.calls])).toEqual([
      ["claude", "1.25", 2],
      ["gpt", "0.5", 2],
    ]);
    const byTeam = await store.call("spendSeries", { groupBy: UsageGroup.TEAM, bucket: UsageBucket.DAY, since: "2026-05-06T00:00:00Z", until: "2026-05-07T00:00:00Z", teamId });
    expect(byTeam.points.map((p) => [p.key, p.costUsd])).toEqual([[teamId, "1.5"]]);
    expect((await store.call("spendSeries", { groupBy: UsageGroup.MEMBER, bucket: UsageBucket.HOUR, since: "2026-01-01T00:00:00Z", until: "2026-05-01T00:00:00Z" })).error?.kind).toBe(
      StoreErrorKind.INVALID,
    );
    expect((await store.call("listLedger", { memberId: ada })).entries.map((e) => e.costUsd)).toEqual(["1", undefined, "0.5"]);
  });

  it("lists recent runs with their cost and runs in flight, and adds the ledger's cost to member.usage", async () => {
    await store.call("beginRun", { runId: "run-1", conversationId: "c1", memberId: ada, initialMessages: [userText("a")] });
    await store.call("beginRun", { runId: "run-2", conversationId: "c2", memberId: ada, initialMessages: [userText("b")] });
    await call(ada, teamId, "gpt", clock.toISOString(), "0.1", { input: 1n, output: 1n }, "run-1");
    await call(ada, teamId, "gpt", clock.toISOString(), undefined, {}, "run-1");
    await store.call("finishRun", { runId: "run-1", status: RunStatus.COMPLETED });

    const recent = await store.call("recentRuns", { memberId: ada });
    expect(recent.runs.map((r) => [r.run?.runId, r.modelCalls, r.costUsd, r.unknownCostCalls, r.teamId])).toEqual([
      ["run-2", 0, "0", 0, teamId],
      ["run-1", 2, "0.1", 1, teamId],
    ]);
    expect(recent.runs[1]?.finishedAt).not.toBe("");
    expect((await store.call("recentRuns", { runningOnly: true })).runs.map((r) => r.run?.runId)).toEqual(["run-2"]);
    expect((await store.call("recentRuns", { teamId: DEFAULT_TEAM_ID })).runs).toEqual([]);

    const usage = await store.call("memberUsage", { memberId: ada });
    expect(usage.members[0]).toMatchObject({ runs: 2, modelCalls: 2, costUsd: "0.1", unknownCostCalls: 1 });
  });
});
