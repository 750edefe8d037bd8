/**
 * The accounting operations against a real store: leases never hand out more
 * than a window has left (except the one overdraft grant), expired leases come
 * back, settling writes one ledger row per admission and charges budgets and
 * rate windows exactly once, and the concurrent-run slots hold.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BudgetPeriod, BudgetScope, DEFAULT_TEAM_ID, LeaseCounter, RunStatus, StoreErrorKind } from "@byok/contracts";
import { startTestStore, userText, type TestStore } from "../store-test-harness.ts";

const USD = 1_000_000_000_000n;

describe("accounting", () => {
  let store: TestStore;
  let clock: Date;
  let memberId: string;

  beforeEach(async () => {
    clock = new Date("2026-03-10T12:00:00.000Z");
    store = await startTestStore({ now: () => clock });
    memberId = (await store.call("createMember", { name: "ada" })).member!.memberId;
  });
  afterEach(() => store.close());

  async function memberBudget(limitUsd: string, period = BudgetPeriod.DAILY, modelId = ""): Promise<string> {
    const set = await store.call("setBudget", { scope: BudgetScope.MEMBER, memberId, period, limitUsd, modelId });
    expect(set.error).toBeUndefined();
    return set.budget!.budgetId;
  }

  async function ask(holder: string, budgetId: string, need: bigint, options: { want?: bigint; overdraft?: boolean; leaseId?: string } = {}) {
    const response = await store.call("acquireLeases", {
      holder,
      ttlMs: 30_000,
      asks: [{ counter: LeaseCounter.BUDGET, budgetId, need, want: options.want ?? need * 10n, overdraft: options.overdraft ?? true, leaseId: options.leaseId ?? "" }],
    });
    expect(response.error).toBeUndefined();
    return response.grants[0]!;
  }

  type Charges = Array<{ leaseId: string; counter: LeaseCounter; amount: bigint }>;

  /** A settle of call `callIndex` of `runId` by this member, charged (and costing) `chargedUsd`. */
  function settleRequest(ticketId: string, callIndex: number, chargedUsd: string | undefined, charges: Charges = [], runId = "run-1", usage = { inputTokens: 100n, outputTokens: 20n }) {
    return {
      ticketId,
      entry: {
        callRef: `run:${runId}:${callIndex}`,
        memberId,
        teamId: DEFAULT_TEAM_ID,
        clientKind: "cursor",
        modelId: "team-gpt",
        providerId: "openai",
        upstreamModel: "gpt-4o",
        runId,
        callIndex,
        usage,
        ...(chargedUsd === undefined ? {} : { costUsd: chargedUsd, chargedUsd }),
        startedAt: clock.toISOString(),
        outcome: "ok",
      },
      charges,
    };
  }

  function settle(ticketId: string, callIndex: number, chargedUsd: string | undefined, charges: Charges = []) {
    return store.call("settleCall", settleRequest(ticketId, callIndex, chargedUsd, charges));
  }

  it("grants at most what is left, a quarter of it at a time, and one overdraft of less than one need", async () => {
    const budgetId = await memberBudget("1");
    const need = (3n * USD) / 10n;
    const grants = [];
    for (let i = 0; i < 5; i++) grants.push(await ask(`replica-${i % 2}`, budgetId, need));
    // 1.0 left: 0.3 (a quarter is 0.25 < need), 0.7 left: 0.3, 0.4 left: 0.3, 0.1 left: overdraft 0.3, then nothing.
    expect(grants.map((g) => g.granted)).toEqual([need, need, need, need, 0n]);
    const outstanding = grants.reduce((sum, g) => sum + g.granted, 0n);
    expect(outstanding).toBeLessThan(USD + need);
    expect(grants[0]!.windowStart).toBe("2026-03-10T00:00:00.000Z");
    expect(grants[0]!.windowEnd).toBe("2026-03-11T00:00:00.000Z");

    // Without overdraft a window with less than `need` left refuses.
    const second = await memberBudget("1", BudgetPeriod.WEEKLY);
    expect((await ask("r", second, (9n * USD) / 10n)).granted).toBe((9n * USD) / 10n);
    expect((await ask("r", second, (2n * USD) / 10n, { overdraft: false })).granted).toBe(0n);
    expect((await ask("r", second, USD / 10n, { overdraft: false })).granted).toBe(USD / 10n);
  });

  it("takes a quarter of what is left when that is more than the need, and tops up an existing lease", async () => {
    const budgetId = await memberBudget("10");
    const first = await ask("a", budgetId, USD / 100n, { want: 100n * USD });
    expect(first.granted).toBe((10n * USD) / 4n);
    const topped = await ask("a", budgetId, USD / 100n, { want: 100n * USD, leaseId: first.leaseId });
    expect(topped.leaseId).toBe(first.leaseId);
    expect(topped.amount).toBe(first.granted + topped.granted);
  });

  it("gives an expired lease's unconsumed slice back, and keeps its consumed part charged", async () => {
    const budgetId = await memberBudget("1");
    const lease = await ask("crashed", budgetId, USD, { want: USD });
    expect(lease.granted).toBe(USD);
    expect((await ask("other", budgetId, USD / 10n, { overdraft: false })).granted).toBe(0n);
    // The crashed replica had settled one call of $0.25 on it.
    expect((await settle("00000000-0000-4000-8000-00000000000a", 1, "0.25", [{ leaseId: lease.leaseId, counter: LeaseCounter.BUDGET, amount: USD / 4n }])).recorded).toBe(true);
    clock = new Date(clock.getTime() + 31_000);
    const after = await ask("other", budgetId, USD / 10n, { want: USD, overdraft: false });
    // 0.75 is free again: a quarter of it (rounded up), at least the need.
    expect(after.granted).toBe((3n * USD) / 16n);
    const listed = await store.call("listBudgets", { memberId });
    expect(listed.budgets.find((b) => b.budgetId === budgetId)).toMatchObject({ chargedUsd: "0.25", unknownCostCalls: 0 });
  });

  it("renews live leases, reports gone ones, and takes back what a replica returns", async () => {
    const budgetId = await memberBudget("1");
    const lease = await ask("a", budgetId, USD / 2n, { want: USD / 2n });
    const released = await store.call("releaseLeases", { holder: "a", returns: [{ leaseId: lease.leaseId, keep: USD / 10n }], renewLeaseIds: [lease.leaseId, "00000000-0000-4000-8000-0000000000ff"], ttlMs: 30_000 });
    expect(released.goneLeaseIds).toEqual(["00000000-0000-4000-8000-0000000000ff"]);
    // 0.9 is free: a quarter is 0.225, more than the need of 0.2.
    expect((await ask("b", budgetId, USD / 5n, { want: USD, overdraft: false })).granted).toBe((9n * USD) / 40n);
    clock = new Date(clock.getTime() + 20_000);
    expect((await store.call("releaseLeases", { holder: "a", renewLeaseIds: [lease.leaseId], ttlMs: 30_000 })).goneLeaseIds).toEqual([]);
    clock = new Date(clock.getTime() + 20_000);
    // Renewed 20 s ago for 30 s: still there.
    expect((await store.call("releaseLeases", { holder: "a", returns: [{ leaseId: lease.leaseId, close: true }], ttlMs: 30_000 })).error).toBeUndefined();
    expect((await store.sql("SELECT count(*)::int AS n FROM accounting_leases WHERE id = $1", [lease.leaseId])).rows[0].n).toBe(0);
  });

  it("settles an admission once, counts a call made again as the next attempt, and records unknown cost as NULL", async () => {
    const budgetId = await memberBudget("5");
    const first = await settle("00000000-0000-4000-8000-000000000001", 1, "0.0123");
    expect(first).toMatchObject({ recorded: true, attempt: 1 });
    expect(await settle("00000000-0000-4000-8000-000000000001", 1, "0.0123")).toMatchObject({ recorded: false, attempt: 1 });
    expect(await settle("00000000-0000-4000-8000-000000000002", 1, "0.0123")).toMatchObject({ recorded: true, attempt: 2 });
    expect(await settle("00000000-0000-4000-8000-000000000003", 2, undefined)).toMatchObject({ recorded: true, attempt: 1 });

    const rows = await store.sql("SELECT call_ref, attempt, cost_usd, charged_usd FROM ledger ORDER BY id");
    expect(rows.rows).toEqual([
      { call_ref: "run:run-1:1", attempt: 1, cost_usd: "0.012300000000", charged_usd: "0.012300000000" },
      { call_ref: "run:run-1:1", attempt: 2, cost_usd: "0.012300000000", charged_usd: "0.012300000000" },
      { call_ref: "run:run-1:2", attempt: 1, cost_usd: null, charged_usd: null },
    ]);
    const counter = await store.sql("SELECT committed FROM accounting_counters WHERE counter = $1", [`budget:${budgetId}`]);
    expect(counter.rows).toEqual([{ committed: String((246n * USD) / 10_000n) }]);
    await expect(store.sql("UPDATE ledger SET cost_usd = 0")).rejects.toThrow(/ledger is append-only/);
  });

  it("settles a batch in one go: one row per admission, attempts in order, an invalid call refused alone, charges summed", async () => {
    const budgetId = await memberBudget("5");
    const lease = await ask("a", budgetId, USD / 10n, { want: USD });
    const call = (ticket: string, callIndex: number, chargedUsd: string, amount: bigint) =>
      settleRequest(`00000000-0000-4000-8000-${ticket}`, callIndex, chargedUsd, [{ leaseId: lease.leaseId, counter: LeaseCounter.BUDGET, amount }], "run-9", { inputTokens: 10n, outputTokens: 2n });
    // Settled before the batch: the batch's repeat of it changes nothing.
    expect(await settle("00000000-0000-4000-8000-0000000000a0", 5, "0.5", [{ leaseId: lease.leaseId, counter: LeaseCounter.BUDGET, amount: USD / 2n }])).toMatchObject({ recorded: true });
    const invalid = { ...call("0000000000a4", 3, "0.1", USD / 10n), ticketId: "not-a-uuid" };
    const batch = await store.call("settleCalls", {
      calls: [call("0000000000a1", 1, "0.25", USD / 4n), invalid, call("0000000000a2", 1, "0.25", USD / 4n), call("0000000000a3", 2, "0.125", USD / 8n), call("0000000000a1", 1, "0.25", USD / 4n)],
    });
    expect(batch.error).toBeUndefined();
    expect(batch.results.map((r) => (r.error === undefined ? [r.recorded, r.attempt] : StoreErrorKind[r.error.kind]))).toEqual([
      [true, 1],
      "INVALID",
      [true, 2],
      [true, 1],
      [false, 1],
    ]);
    // 0.5 before, then 0.25 + 0.25 + 0.125 once each (the repeated ticket is not charged twice).
    const counter = await store.sql("SELECT committed FROM accounting_counters WHERE counter = $1", [`budget:${budgetId}`]);
    expect(counter.rows).toEqual([{ committed: String((1125n * USD) / 1000n) }]);
    const consumed = await store.sql("SELECT consumed FROM accounting_leases WHERE id = $1", [lease.leaseId]);
    expect(consumed.rows).toEqual([{ consumed: String((1125n * USD) / 1000n) }]);
    const rows = await store.sql("SELECT call_ref, attempt FROM ledger WHERE run_id = 'run-9' ORDER BY call_ref, attempt");
    expect(rows.rows).toEqual([
      { call_ref: "run:run-9:1", attempt: 1 },
      { call_ref: "run:run-9:1", attempt: 2 },
      { call_ref: "run:run-9:2", attempt: 1 },
    ]);
    // Every column of a batch's row as the call named it (the batch reaches Postgres as one array per column).
    const row = await store.sql(
      `SELECT ticket_id::text, member_id, team_id::text, client_kind, model_id, provider_id, upstream_model, call_index, request_id, outcome,
              input_tokens::text, output_tokens::text, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, charged_usd, started_at
         FROM ledger WHERE ticket_id = '00000000-0000-4000-8000-0000000000a3'`,
    );
    expect(row.rows).toEqual([
      {
        ticket_id: "00000000-0000-4000-8000-0000000000a3",
        member_id: memberId,
        team_id: DEFAULT_TEAM_ID,
        client_kind: "cursor",
        model_id: "team-gpt",
        provider_id: "openai",
        upstream_model: "gpt-4o",
        call_index: 2,
        request_id: null,
        outcome: "ok",
        input_tokens: "10",
        output_tokens: "2",
        cache_read_tokens: null,
        cache_write_tokens: null,
        reasoning_tokens: null,
        cost_usd: "0.125000000000",
        charged_usd: "0.125000000000",
        started_at: clock,
      },
    ]);
  });

  it("settles concurrent batches that share budgets and call references without deadlock or double counting", async () => {
    const budgetId = await memberBudget("100");
    const teamBudget = (await store.call("setBudget", { scope: BudgetScope.TEAM, teamId: DEFAULT_TEAM_ID, period: BudgetPeriod.DAILY, limitUsd: "100" })).budget!.budgetId;
    const entry = (n: number) => ({
      ticketId: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
      entry: {
        callRef: `request:shared-${n % 5}`,
        memberId,
        teamId: DEFAULT_TEAM_ID,
        clientKind: "openai-api",
        modelId: "team-gpt",
        providerId: "openai",
        upstreamModel: "gpt-4o",
        requestId: `shared-${n % 5}`,
        costUsd: "0.01",
        chargedUsd: "0.01",
        startedAt: clock.toISOString(),
        outcome: "ok",
      },
    });
    // Ten batches at once, each with the call references in a different order.
    const batches = Array.from({ length: 10 }, (_, b) => Array.from({ length: 10 }, (_, i) => entry(b * 10 + ((i * 7 + b) % 10))));
    const answers = await Promise.all(batches.map((calls) => store.call("settleCalls", { calls })));
    for (const answer of answers) expect(answer.error).toBeUndefined();
    const rows = await store.sql("SELECT call_ref, array_agg(attempt ORDER BY attempt) AS attempts FROM ledger GROUP BY call_ref ORDER BY call_ref");
    expect(rows.rows).toEqual(Array.from({ length: 5 }, (_, i) => ({ call_ref: `request:shared-${i}`, attempts: Array.from({ length: 20 }, (_, a) => a + 1) })));
    for (const id of [budgetId, teamBudget]) {
      const counter = await store.sql("SELECT committed FROM accounting_counters WHERE counter = $1", [`budget:${id}`]);
      expect(counter.rows).toEqual([{ committed: String(USD) }]);
    }
  });

  it("starts a budget created later from the ledger's charges in its window", async () => {
    await settle("00000000-0000-4000-8000-000000000011", 1, "0.6");
    const budgetId = await memberBudget("1");
    expect((await ask("a", budgetId, USD / 2n, { overdraft: false })).granted).toBe(0n);
    expect((await ask("a", budgetId, (4n * USD) / 10n, { overdraft: false })).granted).toBe((4n * USD) / 10n);
    // Another model's budget does not see this model's spend.
    const other = await memberBudget("1", BudgetPeriod.DAILY, "other-model");
    expect((await ask("a", other, USD / 2n, { overdraft: false })).granted).toBe(USD / 2n);
  });

  it("limits requests per minute across holders and starts again in the next minute", async () => {
    expect((await store.call("setMemberLimits", { limits: { memberId, requestsPerMinute: 3 } })).error).toBeUndefined();
    const rpm = (holder: string) =>
      store.call("acquireLeases", { holder, ttlMs: 30_000, asks: [{ counter: LeaseCounter.REQUESTS_PER_MINUTE, memberId, need: 1n, want: 8n, overdraft: false }] });
    const grants = [];
    for (const holder of ["a", "b", "a", "b", "a"]) grants.push((await rpm(holder)).grants[0]!.granted);
    expect(grants.reduce((a, b) => a + b, 0n)).toBe(3n);
    expect(grants.at(-1)).toBe(0n);
    clock = new Date("2026-03-10T12:01:00.000Z");
    expect((await rpm("a")).grants[0]).toMatchObject({ granted: 1n, windowStart: "2026-03-10T12:01:00.000Z" });
  });

  it("counts what a returned rate lease used, and an expired one in full for the rest of its minute", async () => {
    expect((await store.call("setMemberLimits", { limits: { memberId, tokensPerMinute: 1000n } })).error).toBeUndefined();
    const tpm = (holder: string, need: bigint) =>
      store.call("acquireLeases", { holder, ttlMs: 5_000, asks: [{ counter: LeaseCounter.TOKENS_PER_MINUTE, memberId, need, want: need, overdraft: false }] });
    const first = (await tpm("a", 600n)).grants[0]!;
    expect(first.granted).toBe(600n);
    // Replica a used 450 of its 600 tokens and closes the lease: 550 are left in the minute.
    await store.call("releaseLeases", { holder: "a", returns: [{ leaseId: first.leaseId, keep: 450n, close: true }] });
    expect((await tpm("b", 600n)).grants[0]?.granted).toBe(0n);
    const second = (await tpm("b", 550n)).grants[0]!;
    expect(second.granted).toBe(550n);
    // Replica b crashes: its lease lapses and counts as used in full until the minute ends.
    clock = new Date(clock.getTime() + 6_000);
    expect((await tpm("c", 1n)).grants[0]?.granted).toBe(0n);
    clock = new Date("2026-03-10T12:01:00.000Z");
    expect((await tpm("c", 1000n)).grants[0]?.granted).toBe(1000n);
  });

  it("holds the concurrent-run limit: a second running run waits for the first to end", async () => {
    expect((await store.call("setMemberLimits", { limits: { memberId, concurrentRuns: 1 } })).error).toBeUndefined();
    await store.call("beginRun", { runId: "run-a", conversationId: "c-a", memberId, initialMessages: [userText("a")] });
    await store.call("beginRun", { runId: "run-b", conversationId: "c-b", memberId, initialMessages: [userText("b")] });
    expect(await store.call("takeRunSlot", { runId: "run-a", memberId })).toMatchObject({ admitted: true, limit: 1, running: 1 });
    expect(await store.call("takeRunSlot", { runId: "run-a", memberId })).toMatchObject({ admitted: true });
    expect(await store.call("takeRunSlot", { runId: "run-b", memberId })).toMatchObject({ admitted: false, limit: 1, running: 1 });
    await store.call("finishRun", { runId: "run-a", status: RunStatus.COMPLETED });
    expect(await store.call("takeRunSlot", { runId: "run-b", memberId })).toMatchObject({ admitted: true, running: 1 });
    expect((await store.call("takeRunSlot", { runId: "nope", memberId })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("takeRunSlot", { runId: "run-b", memberId: "someone-else" })).error?.kind).toBe(StoreErrorKind.FORBIDDEN);
  });

  it("counts HTTP requests' slots in the same concurrent-run limit; a released or lapsed request slot frees", async () => {
    expect((await store.call("setMemberLimits", { limits: { memberId, concurrentRuns: 2 } })).error).toBeUndefined();
    await store.call("beginRun", { runId: "run-a", conversationId: "c-a", memberId, initialMessages: [userText("a")] });
    expect(await store.call("takeRunSlot", { runId: "run-a", memberId })).toMatchObject({ admitted: true, running: 1 });
    const take = (requestId: string) => store.call("takeRequestSlot", { requestId, memberId, holder: "replica-a", ttlMs: 30_000 });
    expect(await take("req-1")).toMatchObject({ admitted: true, limit: 2, running: 2 });
    expect(await take("req-1")).toMatchObject({ admitted: true });
    expect(await take("req-2")).toMatchObject({ admitted: false, limit: 2, running: 2 });
    await store.call("keepRequestSlots", { releaseRequestIds: ["req-1"] });
    expect(await take("req-2")).toMatchObject({ admitted: true, running: 2 });
    // The replica holding req-2 stops renewing it (crashed): once it lapses the slot is free.
    await store.call("keepRequestSlots", { renewRequestIds: ["req-2"], ttlMs: 30_000 });
    expect(await take("req-3")).toMatchObject({ admitted: false });
    clock = new Date(clock.getTime() + 30_001);
    expect(await take("req-3")).toMatchObject({ admitted: true, running: 2 });
    expect((await store.call("takeRequestSlot", { requestId: "req-4", memberId, holder: "", ttlMs: 30_000 })).error?.kind).toBe(StoreErrorKind.INVALID);
  });

  it("answers a member's policy, and the default team's for a member without a record", async () => {
    const team = (await store.call("createTeam", { name: "core", allowedModels: { modelIds: ["b-model", "a-model"] } })).team!;
    await store.call("setMemberTeam", { memberId, teamId: team.teamId });
    await store.call("setBudget", { scope: BudgetScope.TEAM, teamId: team.teamId, period: BudgetPeriod.MONTHLY, limitUsd: "100" });
    await memberBudget("2.5");
    await store.call("setMemberLimits", { limits: { memberId, requestsPerMinute: 10 } });
    const policy = (await store.call("getMemberPolicy", { memberId })).policy!;
    expect(policy).toMatchObject({ memberId, teamId: team.teamId, teamName: "core", allowedModels: { modelIds: ["a-model", "b-model"] }, limits: { requestsPerMinute: 10 } });
    expect(policy.budgets.map((b) => [b.scope, b.period, b.limitUsd]).sort()).toEqual([
      [BudgetScope.MEMBER, BudgetPeriod.DAILY, "2.5"],
      [BudgetScope.TEAM, BudgetPeriod.MONTHLY, "100"],
    ]);
    const local = (await store.call("getMemberPolicy", { memberId: "local" })).policy!;
    expect(local).toMatchObject({ teamId: DEFAULT_TEAM_ID, teamName: "default", budgets: [] });
    expect(local.allowedModels).toBeUndefined();
  });
});
