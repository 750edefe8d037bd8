/**
 * StoreAccounting against a real store (own database and bus prefix): two
 * instances stand for two provider-gateway replicas sharing one member's
 * budgets and limits. What a member would notice: calls over a budget or a
 * limit are refused with the limit named, the admitted spend stays within
 * the budget plus one call's reservation, every admitted call is one ledger
 * row with its exact cost, and a crashed replica's slice comes back.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { BudgetPeriod, BudgetScope, busNames, LeaseCounter, parseMemberId, RunStatus } from "@byok/contracts";
import { parsePricePerMillion, parseUsd, silentLogger } from "@byok/platform";
import { loadConfig, startStore, type RunningStore } from "@byok/store";
import { StoreClient } from "@byok/store-client";
import { createTestBus, createTestDatabase, waitFor, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { minuteStartClock } from "@byok/test-support/minute-clock";
import type { AdmissionDecision, CallAdmission, CallUsage } from "./call-accounting.ts";
import type { AccountedModels } from "./price-table.ts";
import type { CallCost } from "./pricing.ts";
import { StoreAccounting, type AccountingObserver } from "./store-accounting.ts";

const MODEL = "team-gpt";
const price = (usd: string) => parsePricePerMillion(usd) as bigint;
// $1 per million input tokens, $10 per million output tokens.
const MODELS: AccountedModels = new Map([
  [MODEL, { id: MODEL, price: { input: price("1"), output: price("10") }, contextWindow: 10_000 }],
  ["free-model", { id: "free-model", price: undefined, contextWindow: 10_000 }],
]);
/** 100 input + 100 output tokens: 100 * 1 + 100 * 10 = 1,100 µUSD. */
const CALL_COST_PICO = 1_100_000_000n;
const USAGE: CallUsage = { inputTokens: 100, outputTokens: 100 };

let database: TestDatabase;
let bus: TestBus;
let store: RunningStore;
let nc: NatsConnection;
let client: StoreClient;
let replicas: StoreAccounting[];
let memberId: string;

function replica(name: string, options: { leaseTtlMs?: number; observer?: AccountingObserver } = {}): StoreAccounting {
  const accounting = new StoreAccounting({
    store: client,
    models: MODELS,
    holder: name,
    policyTtlMs: 60_000,
    leaseTtlMs: options.leaseTtlMs ?? 30_000,
    leaseIdleMs: 60_000,
    leaseCalls: 4,
    log: silentLogger(),
    ...(options.observer === undefined ? {} : { observer: options.observer }),
  });
  replicas.push(accounting);
  return accounting;
}

let calls = 0;
function admission(overrides: Partial<CallAdmission> = {}): CallAdmission {
  calls += 1;
  return {
    memberId,
    clientKind: "cursor",
    routeId: MODEL,
    providerId: "openai",
    upstreamModel: "gpt-4o",
    call: { kind: "request", requestId: `req-${calls}` },
    inputTokenEstimate: 100,
    maxOutputTokens: 100,
    ...overrides,
  };
}

function storeConfig() {
  return loadConfig({ DATABASE_URL: database.url, NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, DATABASE_POOL_SIZE: "8" });
}

beforeEach(async () => {
  database = await createTestDatabase();
  bus = createTestBus();
  store = await startStore(storeConfig(), { log: silentLogger() });
  nc = await connect({ servers: bus.natsUrl });
  client = new StoreClient(nc, busNames(bus.prefix), { timeoutMs: 5_000 });
  replicas = [];
  memberId = (await client.createMember("ada")).member.memberId;
});

afterEach(async () => {
  for (const r of replicas) await r.close(2_000);
  await nc.close();
  await store.stop();
  await bus.cleanup();
  await database.drop();
});

/**
 * Restarts the store on a clock one second into a minute (minute-clock.ts), so that a per-minute
 * test sees one window however long it takes, without waiting for the wall clock.
 */
async function inOneMinuteWindow(): Promise<void> {
  await store.stop();
  store = await startStore(storeConfig(), { log: silentLogger(), now: minuteStartClock() });
}

async function ledgerRows(): Promise<Array<{ costUsd?: string; chargedUsd?: string; outcome: string }>> {
  return client.listLedger({ memberId, limit: 1000 });
}

describe("StoreAccounting", () => {
  it("admits every call of a member without budgets or limits and writes one ledger row per call with its exact cost", async () => {
    const a = replica("a");
    const decision = await a.admit(admission({ call: { kind: "run-call", runId: "run-1", callIndex: 1 } }));
    expect(decision.kind).toBe("admitted");
    if (decision.kind !== "admitted") return;
    await a.settle(decision.ticket, { inputTokens: 1234, outputTokens: 56 }, "ok");
    const rows = await waitFor(async () => {
      const found = await ledgerRows();
      return found.length === 1 ? found : undefined;
    }, "the ledger row");
    // 1234 * $1/M + 56 * $10/M = $0.001234 + $0.00056
    expect(rows[0]).toMatchObject({ callRef: "run:run-1:1", attempt: 1, runId: "run-1", callIndex: 1, costUsd: "0.001794", outcome: "ok", usage: { inputTokens: 1234n, outputTokens: 56n } });
  });

  it("answers forbidden for a model the member's team does not allow", async () => {
    const team = await client.createTeam({ name: "small", allowedModels: { modelIds: ["free-model"] } });
    await client.setMemberTeam(memberId, team.teamId);
    const decision = await replica("a").admit(admission());
    expect(decision).toMatchObject({ kind: "forbidden", message: `model ${MODEL} is not available to team "small"` });
  });

  it("keeps two replicas' admitted spend within the budget plus one call's reservation, and refuses the rest naming the budget", async () => {
    // Budget: 10.5 calls' worth. Each call reserves exactly its cost (100 in, 100 out).
    await client.setBudget({ scope: BudgetScope.MEMBER, memberId, period: BudgetPeriod.DAILY, limitUsd: "0.01155" });
    const costs: CallCost[] = [];
    const a = replica("a", { observer: { costRecorded: (_model, _team, cost) => costs.push(cost) } });
    const b = replica("b");
    const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).admit(admission())));
    const admitted = decisions.filter((d) => d.kind === "admitted");
    for (const [i, d] of decisions.entries()) if (d.kind === "admitted") await (i % 2 === 0 ? a : b).settle(d.ticket, USAGE, "ok");

    const limit = parseUsd("0.01155") as bigint;
    expect(BigInt(admitted.length) * CALL_COST_PICO).toBeLessThanOrEqual(limit + CALL_COST_PICO);
    // Slices left on the other replica (less than one call) are all that goes unused.
    expect(admitted.length).toBeGreaterThanOrEqual(9);
    const refusals = decisions.filter((d): d is Extract<AdmissionDecision, { kind: "rejected" }> => d.kind === "rejected");
    expect(refusals.length).toBe(30 - admitted.length);
    expect(refusals[0]).toMatchObject({ limit: "member_budget" });
    expect(refusals[0]?.message).toMatch(/^Your daily budget of \$0\.01155 is used up; it resets at \d{4}-\d{2}-\d{2}T00:00:00\.000Z \(UTC\)\.$/);
    expect(refusals[0]?.retryAfterMs).toBeGreaterThan(0);
    // Replica a told the metrics each of its settled calls' exact cost.
    expect(costs.length).toBe(decisions.filter((d, i) => i % 2 === 0 && d.kind === "admitted").length);
    expect(costs.every((c) => c.kind === "known" && c.pico === CALL_COST_PICO)).toBe(true);

    await waitFor(async () => (await ledgerRows()).length === admitted.length, "every admitted call in the ledger");
    const budget = (await client.listBudgets({ memberId }))[0];
    expect(parseUsd(budget?.chargedUsd ?? "")).toBe(BigInt(admitted.length) * CALL_COST_PICO);
  });

  it("holds requests per minute across two replicas", async () => {
    await client.setMemberLimits({ memberId, requestsPerMinute: 5 });
    await inOneMinuteWindow();
    const a = replica("a");
    const b = replica("b");
    const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).admit(admission())));
    const admitted = decisions.filter((d) => d.kind === "admitted").length;
    expect(admitted).toBeLessThanOrEqual(5);
    expect(admitted).toBeGreaterThan(0);
    expect(decisions.find((d) => d.kind === "rejected")).toMatchObject({ limit: "requests_per_minute", message: expect.stringMatching(/^Your limit of 5 requests per minute is reached/) });
  });

  it("holds tokens per minute across two replicas, settling each call to its reported tokens", async () => {
    // Each call reserves 100 + 100 tokens; 1,000 per minute fit 5 (the overdraft may admit one more).
    await client.setMemberLimits({ memberId, tokensPerMinute: 1000n });
    await inOneMinuteWindow();
    const a = replica("a");
    const b = replica("b");
    const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).admit(admission())));
    const admitted = decisions.filter((d) => d.kind === "admitted").length;
    expect(admitted * 200).toBeLessThanOrEqual(1000 + 200);
    expect(decisions.find((d) => d.kind === "rejected")).toMatchObject({ limit: "tokens_per_minute" });
  });

  it("lets a member run only as many runs at once as its limit, counted by the store", async () => {
    await client.setMemberLimits({ memberId, concurrentRuns: 1 });
    const member = parseMemberId(memberId);
    for (const runId of ["run-a", "run-b"]) await client.beginRun({ runId, conversationId: `c-${runId}`, memberId: member });
    const a = replica("a");
    const b = replica("b");
    const first = await a.admit(admission({ call: { kind: "run-call", runId: "run-a", callIndex: 1 } }));
    const second = await b.admit(admission({ call: { kind: "run-call", runId: "run-b", callIndex: 1 } }));
    expect(first.kind).toBe("admitted");
    expect(second).toMatchObject({ kind: "rejected", limit: "concurrent_runs", message: "Your limit of 1 concurrent run is reached (1 running); it frees up when one of them ends." });
    // Later calls of an admitted run are not counted again.
    expect((await a.admit(admission({ call: { kind: "run-call", runId: "run-a", callIndex: 2 } }))).kind).toBe("admitted");
    await client.finishRun({ runId: "run-a", status: RunStatus.COMPLETED });
    await client.beginRun({ runId: "run-c", conversationId: "c-run-c", memberId: member });
    expect((await b.admit(admission({ call: { kind: "run-call", runId: "run-c", callIndex: 1 } }))).kind).toBe("admitted");
  });

  it("admits a member's next request at its concurrent-run limit as soon as the one before was settled on the same replica", async () => {
    await client.setMemberLimits({ memberId, concurrentRuns: 1 });
    const a = replica("a");
    // Settle, then ask again at once, as a client does that sends its next request when a stream ended.
    for (let i = 0; i < 20; i++) {
      const admitted = await a.admit(admission());
      expect(admitted.kind).toBe("admitted");
      if (admitted.kind !== "admitted") return;
      void a.settle(admitted.ticket, { inputTokens: 10, outputTokens: 5 }, "ok");
    }
  });

  it("gets a crashed replica's unused slice back once its lease lapses", async () => {
    const budget = await client.setBudget({ scope: BudgetScope.MEMBER, memberId, period: BudgetPeriod.DAILY, limitUsd: "0.0044" });
    // A replica leased the whole budget (4 calls' worth) and died: it never renews or returns it.
    const whole = parseUsd("0.0044") as bigint;
    const [grant] = await client.acquireLeases({ holder: "crashed", ttlMs: 1_500, asks: [{ counter: LeaseCounter.BUDGET, budgetId: budget.budgetId, need: whole, want: whole }] });
    expect(grant?.granted).toBe(whole);
    const other = replica("other");
    expect(await other.admit(admission())).toMatchObject({ kind: "rejected", limit: "member_budget" });
    const later = await waitFor(async () => {
      const decision = await other.admit(admission());
      return decision.kind === "admitted" ? decision : undefined;
    }, "the crashed replica's lease to lapse", 10_000);
    expect(later.kind).toBe("admitted");
  });

  it("charges a budget the call's reservation when its cost is unknown, and refuses a budgeted call on a model without a price", async () => {
    await client.setBudget({ scope: BudgetScope.MEMBER, memberId, period: BudgetPeriod.MONTHLY, limitUsd: "1" });
    const a = replica("a");
    const decision = await a.admit(admission({ inputTokenEstimate: 200, maxOutputTokens: 50 }));
    if (decision.kind !== "admitted") throw new Error(`not admitted: ${JSON.stringify(decision)}`);
    await a.settle(decision.ticket, undefined, "CANCELLED");
    const rows = await waitFor(async () => {
      const found = await ledgerRows();
      return found.length === 1 ? found : undefined;
    }, "the ledger row");
    // No usage: cost unknown (unset), budgets charged the reservation 200 * $1/M + 50 * $10/M = $0.0007.
    expect(rows[0]?.costUsd).toBeUndefined();
    expect(rows[0]).toMatchObject({ chargedUsd: "0.0007", outcome: "CANCELLED" });

    expect(await a.admit(admission({ routeId: "free-model" }))).toMatchObject({ kind: "rejected", limit: "member_budget", message: expect.stringContaining("has no input and output price") });
  });
});
