/**
 * What the budget and limit check adds to a model call, with two
 * provider-gateway replicas (each its own StoreAccounting with its own
 * leases) sharing one store on real Postgres and NATS.
 *
 * Each scenario starts two replicas in this process and sends model calls
 * over the bus the way a run worker does (ModelRequest on the invoke subject,
 * frames to an inbox, caller probes answered), round-robin across the two by
 * the queue group, against the mock LLM. Measured per call:
 * - admit: the accounting's admit() as the replica runs it (the whole check:
 *   member policy, allowed model, run slot, lease reservations, and a top-up
 *   when a lease runs dry);
 * - call: request published -> done frame, end to end.
 * Scenarios: pass-through accounting (no check at all, the baseline of the
 * end-to-end column), no budgets or limits configured, member + team +
 * per-model budgets with requests and tokens per minute (all large enough
 * never to refuse), and the same plus a concurrent-run limit with every call
 * the first of a new run (the one store round trip per run).
 * Prints p50 / p99 / max and the store requests the admissions caused.
 * Nothing here asserts on timings.
 *
 *   npm run bench -- budget-check
 *   BENCH_CALLS=500 node bench/budget-check.ts
 *
 * Environment (all optional): BENCH_CALLS (2000 per scenario), BENCH_WARMUP
 * (200), BENCH_CONCURRENCY (4 calls in flight).
 */
import { performance } from "node:perf_hooks";
import { create, toBinary } from "@bufbuild/protobuf";
import { connect, createInbox, type NatsConnection } from "@nats-io/transport-node";
import { BudgetPeriod, BudgetScope, busNames, CALLER_PROBE_HEADER, decodeModelEventFrame, ModelRequestSchema, RunStatus, type BusNames } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { StoreClient } from "@byok/store-client";
import { loadConfig as loadStoreConfig, startStore } from "@byok/store";
import { loadConfig as loadGatewayConfig, startProviderGateway, type ProviderGateway } from "@byok/provider-gateway";
import { passThroughAccounting, type CallAccounting } from "@byok/provider-gateway/accounting/call-accounting";
import { StoreAccounting, type AccountingStore } from "@byok/provider-gateway/accounting/store-accounting";
import { accountedModels } from "@byok/provider-gateway/accounting/price-table";
import { providerFixture } from "@byok/test-support/fixtures";
import { createTestBus, createTestDatabase } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { machineContext, percentile, renderTable } from "./support/report.ts";
import { intSetting } from "./support/settings.ts";

const FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const MODEL = "bench-model";
const KEY_ENV = "BENCH_MOCK_KEY";

const CALLS = intSetting("BENCH_CALLS", 2000);
const WARMUP = intSetting("BENCH_WARMUP", 200);
const CONCURRENCY = intSetting("BENCH_CONCURRENCY", 4);

interface StoreCounts {
  policy: number;
  acquire: number;
  runSlot: number;
}

/** The store client the accounting uses, counting the requests admissions make. */
function countingStore(client: StoreClient, counts: StoreCounts): AccountingStore {
  return {
    memberPolicy: (memberId) => {
      counts.policy += 1;
      return client.memberPolicy(memberId);
    },
    acquireLeases: (request) => {
      counts.acquire += 1;
      return client.acquireLeases(request);
    },
    takeRunSlot: (runId, memberId) => {
      counts.runSlot += 1;
      return client.takeRunSlot(runId, memberId);
    },
    releaseLeases: (request) => client.releaseLeases(request),
    settleCalls: (requests) => client.settleCalls(requests),
    takeRequestSlot: (requestId, memberId, holder, ttlMs) => {
      counts.runSlot += 1;
      return client.takeRequestSlot(requestId, memberId, holder, ttlMs);
    },
    keepRequestSlots: (renew, release, ttlMs) => client.keepRequestSlots(renew, release, ttlMs),
  };
}

/** Times admit() as the replica runs it. */
function timed(inner: CallAccounting, samples: number[]): CallAccounting {
  return {
    async admit(call) {
      const started = performance.now();
      try {
        return await inner.admit(call);
      } finally {
        samples.push(performance.now() - started);
      }
    },
    settle: (ticket, usage, outcome) => inner.settle(ticket, usage, outcome),
  };
}

/** One model call over the bus as a run worker makes it; resolves with the terminal frame's kind. */
function invoke(nc: NatsConnection, names: BusNames, memberId: string, callId: string): Promise<string> {
  return new Promise((resolve) => {
    const inbox = createInbox();
    const sub = nc.subscribe(inbox, {
      callback: (_err, msg) => {
        if (msg.headers?.has(CALLER_PROBE_HEADER) === true) {
          msg.respond();
          return;
        }
        for (const { event } of decodeModelEventFrame(msg.data)) {
          if (event.case === "done" || event.case === "failure") {
            sub.unsubscribe();
            resolve(event.case === "done" ? "done" : `failure: ${event.value.message}`);
          }
        }
      },
    });
    const runId = callId.slice(0, callId.lastIndexOf(":"));
    const request = create(ModelRequestSchema, {
      callId,
      runId,
      conversationId: `conv-${runId}`,
      memberId,
      spec: { modelId: MODEL },
      prompt: { mode: "agent", systemText: "You are a coding agent. ".repeat(200) },
      messages: [{ body: { case: "user", value: { content: [{ part: { case: "text", value: { text: "Rename the function and update its callers." } } }] } } }],
    });
    nc.publish(names.providerInvoke, toBinary(ModelRequestSchema, request), { reply: inbox });
  });
}

interface Scenario {
  readonly name: string;
  readonly memberId: string;
  readonly accounting: "pass-through" | "store";
  /** Each call is the first of a run the store has begun (the concurrent-run slot is taken once per run). */
  readonly firstCallOfRun: boolean;
}

interface Result {
  readonly scenario: Scenario;
  readonly admit: number[];
  readonly call: number[];
  readonly counts: StoreCounts;
  readonly failures: number;
}

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const bus = createTestBus();
  const llm: MockLlm = await startMockLlm();
  const names = busNames(bus.prefix);
  const busEnv = { NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, LOG_LEVEL: "silent" };
  const store = await startStore(loadStoreConfig({ ...busEnv, DATABASE_URL: database.url }), { log: silentLogger() });
  const nc = await connect({ servers: bus.natsUrl });
  const client = new StoreClient(nc, names, { timeoutMs: 10_000 });
  const gatewayFile = JSON.stringify({
    providers: { mock: { kind: "openai-chat", baseUrl: llm.baseUrl("openai-chat"), apiKeyEnv: KEY_ENV, maxAttempts: 1 } },
    models: [{ id: MODEL, displayName: "Bench model", provider: "mock", upstreamModel: "gpt-4o", maxOutputTokens: 1024, price: { input: "2.5", output: "10" } }],
  });
  const gatewayEnv = { ...busEnv, [KEY_ENV]: "mock-key-not-a-secret" };

  try {
    const plain = (await client.createMember("no-limits")).member.memberId;
    const limited = (await client.createMember("limited")).member.memberId;
    const team = await client.createTeam({ name: "bench-team" });
    await client.setMemberTeam(limited, team.teamId);
    await client.setBudget({ scope: BudgetScope.MEMBER, memberId: limited, period: BudgetPeriod.DAILY, limitUsd: "100000" });
    await client.setBudget({ scope: BudgetScope.TEAM, teamId: team.teamId, period: BudgetPeriod.MONTHLY, limitUsd: "1000000" });
    await client.setBudget({ scope: BudgetScope.MEMBER, memberId: limited, modelId: MODEL, period: BudgetPeriod.WEEKLY, limitUsd: "100000" });
    await client.setMemberLimits({ memberId: limited, requestsPerMinute: 1_000_000, tokensPerMinute: 10_000_000_000n });
    const perRun = (await client.createMember("per-run")).member.memberId;
    await client.setMemberLimits({ memberId: perRun, requestsPerMinute: 1_000_000, tokensPerMinute: 10_000_000_000n, concurrentRuns: 1_000_000 });

    const scenarios: Scenario[] = [
      { name: "pass-through (no check)", memberId: plain, accounting: "pass-through", firstCallOfRun: false },
      { name: "no budgets or limits", memberId: plain, accounting: "store", firstCallOfRun: false },
      { name: "3 budgets + rpm + tpm", memberId: limited, accounting: "store", firstCallOfRun: false },
      { name: "+ run slot (1st call of a run)", memberId: perRun, accounting: "store", firstCallOfRun: true },
    ];
    const results: Result[] = [];
    for (const scenario of scenarios) results.push(await runScenario(scenario));

    console.log(`\nbudget check: two provider-gateway replicas, ${CALLS} calls per scenario (after ${WARMUP} warm-up), ${CONCURRENCY} in flight`);
    console.log(machineContext());
    console.log("");
    const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : "-");
    console.log(
      renderTable(
        ["scenario", "admit p50 ms", "admit p99 ms", "admit max ms", "call p50 ms", "call p99 ms", "policy reads", "lease top-ups", "run slots", "failed"],
        results.map((r) => [
          r.scenario.name,
          ms(percentile(r.admit, 50)),
          ms(percentile(r.admit, 99)),
          ms(percentile(r.admit, 100)),
          ms(percentile(r.call, 50)),
          ms(percentile(r.call, 99)),
          String(r.counts.policy),
          String(r.counts.acquire),
          String(r.counts.runSlot),
          String(r.failures),
        ]),
      ),
    );
    console.log("\nadmit = the accounting's admit() inside the replica; call = request published -> done frame. Store requests count the measured calls and their warm-up.");
  } finally {
    await nc.close();
    await store.stop();
    await llm.stop();
    await bus.cleanup();
    await database.drop();
  }

  async function runScenario(scenario: Scenario): Promise<Result> {
    const admit: number[] = [];
    const counts: StoreCounts = { policy: 0, acquire: 0, runSlot: 0 };
    const replicas: ProviderGateway[] = [];
    const accountings: StoreAccounting[] = [];
    const connections: NatsConnection[] = [];
    for (const holder of ["replica-a", "replica-b"]) {
      let accounting: CallAccounting = passThroughAccounting;
      if (scenario.accounting === "store") {
        const replicaNc = await connect({ servers: bus.natsUrl });
        connections.push(replicaNc);
        const store = new StoreAccounting({
          store: countingStore(new StoreClient(replicaNc, names, { timeoutMs: 10_000 }), counts),
          models: accountedModels(JSON.parse(gatewayFile), undefined),
          holder,
          policyTtlMs: 5_000,
          leaseTtlMs: 30_000,
          leaseIdleMs: 15_000,
          leaseCalls: 32,
          log: silentLogger(),
        });
        accountings.push(store);
        accounting = store;
      }
      replicas.push(await startProviderGateway(loadGatewayConfig({ ...gatewayEnv, ACCOUNTING: "off" }, () => gatewayFile), { log: silentLogger(), accounting: timed(accounting, admit) }));
    }

    const call: number[] = [];
    let failures = 0;
    let next = 0;
    const total = WARMUP + CALLS;
    const callId = async (i: number): Promise<string> => {
      const runId = `${scenario.name.replace(/[^a-z0-9]+/gi, "-")}-${i}`;
      if (!scenario.firstCallOfRun) return `${runId}:2`;
      await client.beginRun({ runId, conversationId: `conv-${runId}`, memberId: scenario.memberId });
      return `${runId}:1`;
    };
    const lane = async (): Promise<void> => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const id = await callId(i);
        llm.enqueue({ kind: "fixture", file: FIXTURE });
        const started = performance.now();
        const outcome = await invoke(nc, names, scenario.memberId, id);
        if (i >= WARMUP) call.push(performance.now() - started);
        if (outcome !== "done") failures += 1;
        if (scenario.firstCallOfRun) await client.finishRun({ runId: id.slice(0, id.lastIndexOf(":")), status: RunStatus.COMPLETED });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    for (const r of replicas) await r.stop();
    for (const a of accountings) await a.close();
    for (const c of connections) await c.close();
    return { scenario, admit: admit.slice(WARMUP), call, counts, failures };
  }
}

await main();
