/**
 * Budgets and limits as a member sees them, with two provider-gateway
 * replicas as real child processes (each its own accounting with its own
 * leases) in front of one store, real NATS and Postgres, the fake Cursor
 * client and the mock LLM:
 *
 * - 40 concurrent runs of known cost against a small USD budget: the admitted
 *   cost stays within the budget plus one call's reservation, every refused
 *   run ends with Cursor's resource_exhausted error naming the budget and its
 *   reset (no turn_ended, nothing appended), and the ledger holds exactly the
 *   provider-reported usage times the price.
 * - Requests per minute, tokens per minute and concurrent runs hold across
 *   the two replicas.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import type { Subscription } from "@nats-io/transport-node";
import { BudgetPeriod, BudgetScope, ModelRequestSchema, type ModelRequest } from "@byok/contracts";
import { aiserver } from "@byok/cursor-protocol";
import { parsePricePerMillion, parseUsd } from "@byok/platform";
import { estimateRequestTokens } from "../services/provider-gateway/src/accounting/estimate-tokens.ts";
import { TestProcesses } from "./failover-support.ts";
import type { RunResult } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import { minuteStartClock } from "@byok/test-support/minute-clock";
import { storedHistory } from "@byok/test-support/stored-messages";
import { providerFixture } from "@byok/test-support/fixtures";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
/** What the fixture reports: prompt_tokens 14, completion_tokens 30 (reasoning 0). */
const REPORTED = { input: 14n, output: 30n };
const PRICE = { input: "0.001", output: "10" };
const MAX_OUTPUT_TOKENS = 30;
const P_IN = parsePricePerMillion(PRICE.input) as bigint;
const P_OUT = parsePricePerMillion(PRICE.output) as bigint;
/** One call's cost in picodollars: 14 * $0.001/M + 30 * $10/M. */
const CALL_COST = REPORTED.input * P_IN + REPORTED.output * P_OUT;

let processes: TestProcesses;
let gw: GatewayHarness;
let requests: ModelRequest[];
let invokeWatch: Subscription | undefined;

/** `storeNow`: the store's clock (per-minute tests pin it to the start of a minute, see minute-clock.ts). */
async function startReplicas(options: { storeNow?: () => Date } = {}): Promise<void> {
  gw = await startGateway({
    ...(options.storeNow === undefined ? {} : { storeNow: options.storeNow }),
    providerGateway: false,
    workers: 2,
    model: { maxOutputTokens: MAX_OUTPUT_TOKENS, price: PRICE },
    env: { runWorker: { MAX_CONCURRENT_RUNS: "40" }, cursorAdapter: { MODEL_LIST_TTL_MS: "100" } },
  });
  // Every model request the workers publish (a plain subscriber sees them all, beside the replicas' queue group).
  invokeWatch = gw.nc.subscribe(gw.names.providerInvoke, {
    callback: (_err, msg) => {
      requests.push(fromBinary(ModelRequestSchema, msg.data));
    },
  });
  await gw.nc.flush();
  await processes.startProviderGateway(gw, "replica-a");
  await processes.startProviderGateway(gw, "replica-b");
}

async function createMember(name: string): Promise<string> {
  const created = await gw.store("createMember", { name });
  if (created.member === undefined) throw new Error(`member.create failed: ${created.error?.message}`);
  return created.member.memberId;
}

/** `count` new conversations of `memberId` sending one message each, all at once. */
function concurrentRuns(memberId: string, count: number): { conversations: string[]; finished: Promise<RunResult[]> } {
  const client = gw.client({ headers: { "x-byok-member-id": memberId } });
  const chats = Array.from({ length: count }, () => client.conversation());
  return { conversations: chats.map((c) => c.id), finished: Promise.all(chats.map((c) => c.send("hello there", { modelId: gw.modelId }).finished)) };
}

function refused(result: RunResult): boolean {
  return result.end.kind === "error" && result.end.code === "resource_exhausted";
}

/** A refused run as Cursor shows it: resource_exhausted with our custom error text, no turn_ended, no checkpoint. */
function expectUsageLimitError(result: RunResult, message: RegExp): void {
  const frames = result.describe();
  expect(result.end, frames).toMatchObject({ kind: "error", code: "resource_exhausted", message: expect.stringMatching(message) });
  expect(result.turnEnded, frames).toBeUndefined();
  expect(result.checkpoints, frames).toEqual([]);
  expect(result.text, frames).toBe("");
  if (result.end.kind !== "error") return;
  const detail = result.end.details.find((d) => d.type === "aiserver.v1.ErrorDetails");
  const decoded = fromBinary(aiserver.ErrorDetailsSchema, detail!.value);
  expect(decoded.error).toBe(aiserver.ErrorDetails_Error.CUSTOM_MESSAGE);
  expect(decoded.details?.title).toBe("Usage limit reached");
  expect(decoded.details?.detail).toMatch(message);
}

async function assistantMessages(conversationId: string): Promise<number> {
  return (await storedHistory(gw, conversationId)).filter((m) => m.body.case === "assistant").length;
}

beforeEach(() => {
  processes = new TestProcesses();
  requests = [];
});

afterEach(async () => {
  invokeWatch?.unsubscribe();
  invokeWatch = undefined;
  await processes.stopAll();
  await gw?.stop();
});

describe("budgets and limits across two provider-gateway replicas", () => {
  it("keeps 40 concurrent runs within a small USD budget plus one call's reservation; refused runs get Cursor's usage-limit error", async () => {
    await startReplicas();
    const memberId = await createMember("ada");
    // About 10.6 calls' worth.
    const budgetUsd = "0.0032";
    expect((await gw.store("setBudget", { scope: BudgetScope.MEMBER, memberId, period: BudgetPeriod.DAILY, limitUsd: budgetUsd })).error).toBeUndefined();
    for (let i = 0; i < 40; i++) gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });

    const { conversations, finished } = concurrentRuns(memberId, 40);
    const results = await finished;
    const completed = results.filter((r) => r.end.kind === "ok");
    const rejected = results.filter(refused);
    expect(completed.length + rejected.length, results.map((r) => JSON.stringify(r.end)).join("\n")).toBe(40);
    expect(completed.length).toBeGreaterThan(0);
    expect(rejected.length).toBeGreaterThan(0);

    // The guarantee: admitted cost <= budget + one call's reservation (its cost bound: input estimate at the
    // dearest input price plus max output tokens at the output price).
    const reservations = requests.map((r) => BigInt(estimateRequestTokens(r)) * P_IN + BigInt(MAX_OUTPUT_TOKENS) * P_OUT);
    const largestReservation = reservations.reduce((a, b) => (a > b ? a : b), 0n);
    const budget = parseUsd(budgetUsd) as bigint;
    expect(BigInt(completed.length) * CALL_COST).toBeLessThanOrEqual(budget + largestReservation);
    // Only what the replicas left over (less than a call each) goes unused.
    expect(BigInt(completed.length + 2) * CALL_COST).toBeGreaterThan(budget);

    // Every refused run: the typed error, nothing appended.
    for (const result of rejected) expectUsageLimitError(result, /^Your daily budget of \$0\.0032 is used up; it resets at \d{4}-\d{2}-\d{2}T00:00:00\.000Z \(UTC\)\.$/);
    const appended = await Promise.all(conversations.map(assistantMessages));
    expect(appended.filter((n) => n > 0).length).toBe(completed.length);
    expect(appended.every((n) => n <= 1)).toBe(true);
    // Refused calls never reached the provider.
    expect(gw.llm.requests.length).toBe(completed.length);

    // The ledger: one row per admitted call, exactly the reported usage times the price.
    const ledger = await waitFor(async () => {
      const rows = await gw.store("listLedger", { memberId, limit: 100 });
      return rows.entries.length === completed.length ? rows.entries : undefined;
    }, "every admitted call in the ledger");
    let total = 0n;
    for (const row of ledger) {
      expect(row.usage).toMatchObject({ inputTokens: REPORTED.input, outputTokens: REPORTED.output });
      expect(row).toMatchObject({ clientKind: "cursor", modelId: gw.modelId, outcome: "ok", attempt: 1 });
      total += parseUsd(row.costUsd ?? "unknown") as bigint;
    }
    const reportedTotal = ledger.reduce((sum, row) => sum + (row.usage?.inputTokens ?? 0n) * P_IN + (row.usage?.outputTokens ?? 0n) * P_OUT, 0n);
    expect(total).toBe(reportedTotal);
    expect(total).toBe(BigInt(completed.length) * CALL_COST);
    const usage = await gw.store("memberUsage", { memberId });
    expect(usage.members[0]).toMatchObject({ modelCalls: completed.length, unknownCostCalls: 0 });
    expect(parseUsd(usage.members[0]?.costUsd ?? "")).toBe(total);
  });

  it("holds requests per minute across both replicas", async () => {
    // One minute window for the whole test: the store's clock starts one second into a minute.
    await startReplicas({ storeNow: minuteStartClock() });
    const memberId = await createMember("bea");
    expect((await gw.store("setMemberLimits", { limits: { memberId, requestsPerMinute: 3 } })).error).toBeUndefined();
    for (let i = 0; i < 8; i++) gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });

    const results = await concurrentRuns(memberId, 8).finished;
    const completed = results.filter((r) => r.end.kind === "ok").length;
    expect(completed).toBeLessThanOrEqual(3);
    expect(completed).toBeGreaterThan(0);
    expect(gw.llm.requests.length).toBe(completed);
    const rejected = results.filter(refused);
    expect(rejected.length).toBe(8 - completed);
    for (const result of rejected) expectUsageLimitError(result, /^Your limit of 3 requests per minute is reached; it resets at \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z \(UTC\)\.$/);
  });

  it("holds tokens per minute across both replicas: calls in flight reserve their input estimate plus max output tokens", async () => {
    await startReplicas({ storeNow: minuteStartClock() });
    // One call of another member shows what a call reserves (all these runs send the same request).
    const probe = await createMember("probe");
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    expect((await concurrentRuns(probe, 1).finished)[0]?.end.kind).toBe("ok");
    const perCall = BigInt(estimateRequestTokens(requests[0]!) + MAX_OUTPUT_TOKENS);

    const memberId = await createMember("cyd");
    expect((await gw.store("setMemberLimits", { limits: { memberId, tokensPerMinute: 3n * perCall } })).error).toBeUndefined();
    // The upstream answers are held: admitted calls stay in flight with their reservations.
    const held = Array.from({ length: 8 }, () => gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE, holdHeaders: true }));
    const before = gw.llm.requests.length;
    const all = concurrentRuns(memberId, 8).finished;
    // Wait until every run is either refused or waiting on the provider.
    let refusedRuns = 0;
    await waitFor(async () => {
      refusedRuns = (await gw.sql<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE failure_kind = 'over_limit'"))[0]?.n ?? 0;
      return gw.llm.requests.length - before + refusedRuns === 8;
    }, "every run refused or in flight", 20_000);
    const inFlight = gw.llm.requests.length - before;
    // 3 reservations fit; the call that crosses the limit may overshoot it by its own reservation.
    expect(inFlight).toBeLessThanOrEqual(4);
    expect(inFlight).toBeGreaterThan(0);
    expect(refusedRuns).toBe(8 - inFlight);
    for (const h of held) h.release();
    const results = await all;
    expect(results.filter((r) => r.end.kind === "ok").length).toBe(inFlight);
    for (const result of results.filter(refused)) expectUsageLimitError(result, /^Your limit of \d+ tokens per minute is reached/);
  });

  it("holds the concurrent-run limit across both replicas and frees a slot when a run ends", async () => {
    await startReplicas();
    const memberId = await createMember("dee");
    expect((await gw.store("setMemberLimits", { limits: { memberId, concurrentRuns: 2 } })).error).toBeUndefined();
    const held = Array.from({ length: 5 }, () => gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE, holdHeaders: true }));
    const all = concurrentRuns(memberId, 5).finished;
    await waitFor(async () => {
      const refusedRuns = (await gw.sql<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE failure_kind = 'over_limit'"))[0]?.n ?? 0;
      return gw.llm.requests.length + refusedRuns === 5;
    }, "every run refused or in flight", 20_000);
    expect(gw.llm.requests.length).toBe(2);
    for (const h of held) h.release();
    const results = await all;
    expect(results.filter((r) => r.end.kind === "ok").length).toBe(2);
    for (const result of results.filter(refused)) expectUsageLimitError(result, /^Your limit of 2 concurrent runs is reached \(2 running\); it frees up when one of them ends\.$/);

    // Both ended: a new run gets a slot.
    const again = await concurrentRuns(memberId, 1).finished;
    expect(again[0]?.end.kind).toBe("ok");
  });
});
