/**
 * The Cursor path through the real multi-process gateway (issue 15's table).
 *
 * The gateway runs as `npm start` does (scripts/start.ts: every service its
 * own OS process) on the machine's Postgres and NATS, with a fresh database
 * and bus prefix. This process holds the mock upstream (test-support mock-llm,
 * 50 text deltas in one write unless paced) and both clients: the fake Cursor
 * client (through the gateway, to the adapter or through the edge proxy) and
 * the same turn's request sent straight to the mock ("direct"). The arms
 * alternate turn by turn (or batch by batch) in the same run, so machine noise
 * hits both; every table prints direct, gateway and the difference ("added").
 * Nothing here asserts on timings.
 *
 *   node bench/cursor-path.ts                 # the full run (~10+ minutes)
 *   BENCH_QUICK=1 node bench/cursor-path.ts   # every phase, shortened
 *   npm run bench -- cursor-path
 *
 * Environment (all optional; see bench/support/bench-settings.ts and
 * docs/performance.md): BENCH_QUICK, BENCH_MAX_SECONDS, BENCH_WARMUP,
 * BENCH_ITERATIONS, BENCH_CPU_TURNS, BENCH_CONCURRENCY (e.g. "16,64"),
 * BENCH_ROUNDS, BENCH_GROWTH_TURNS, BENCH_CHECKPOINT_MESSAGES,
 * BENCH_CHECKPOINT_REPEATS, BENCH_OPEN_RUNS (e.g. "16,64,256"),
 * BENCH_PACED_CHUNKS, BENCH_PACED_INTERVAL_MS, BENCH_SPREAD_RUNS (e.g. "256,512"),
 * BENCH_SPREAD_ARRIVAL_MS, BENCH_SPREAD_CHUNKS, BENCH_WAITING_RUNS (e.g. "128,512"),
 * BENCH_WAITING_HOLD_SECONDS, BENCH_SETTLE_SECONDS,
 * BENCH_SOAK_SECONDS, BENCH_SOAK_IDLE_SECONDS, BENCH_SOAK_EVERY_SECONDS, BENCH_CHUNKS,
 * BENCH_TURN_TIMEOUT_MS, BENCH_LOG_LEVEL (services' LOG_LEVEL, default warn),
 * BENCH_PROF_DIR (every service under --cpu-prof, see bench/cpu-profile-summary.ts).
 */
import { performance } from "node:perf_hooks";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@byok/contracts";
import { ADMIN_DATABASE_URL } from "@byok/test-support/infra";
import { startMockLlm } from "@byok/test-support/mock-llm";
import { Deadline, readCursorPathSettings } from "./support/bench-settings.ts";
import { DirectArm, GatewayArm, longConversation, PacedUpstream, textStream, type ChatMessage, type UpstreamStream } from "./support/cursor-arms.ts";
import { addedTable, cpuTable, formatRate, rssOverTimeTable, rssTable, type ArmSamples } from "./support/cursor-path-report.ts";
import { pacedOpenRuns, spreadOpenRuns, waitingOpenRuns, type OpenRunsContext } from "./support/open-runs.ts";
import { startDeployment, type Deployment } from "./support/deployment.ts";
import { databaseSize } from "./support/database-size.ts";
import { cpuBetween, cpuDuring, cpuSum, postgresBackends, postgresTransactions, ProcessSampler, trackedNatsServer, type Sample, type Tracked } from "./support/proc-stats.ts";
import { formatMachineSpeed, measureMachineSpeed } from "./support/machine-speed.ts";
import { machineContext, formatMs, percentile, renderTable } from "./support/report.ts";
import { busMessagesTable, readBusCounters, type BusCounters } from "./support/bus-counters.ts";

const PROMPT = "Say something.";

interface Ctx extends OpenRunsContext {
  readonly proxy: GatewayArm;
  readonly burst: UpstreamStream;
}

function note(ctx: Ctx, what: string, done: number, wanted: number): void {
  if (done < wanted) console.log(`note: ${what} stopped early (BENCH_MAX_SECONDS or Ctrl-C) after ${done} of ${wanted}`);
  void ctx;
}

async function sequential(ctx: Ctx): Promise<void> {
  const { settings, deadline, direct, adapter, proxy, burst } = ctx;
  for (let i = 0; i < settings.warmup && !deadline.passed(); i++) {
    await direct.turn(burst, [], PROMPT);
    await adapter.turn(burst, adapter.conversation(), PROMPT);
    await proxy.turn(burst, proxy.conversation(), PROMPT);
  }
  const samples = () => ({ ttft: [] as number[], end: [] as number[], upstream: [] as number[] });
  const d = samples();
  const a = samples();
  const p = samples();
  let n = 0;
  for (; n < settings.sequential && !deadline.passed(); n++) {
    for (const [arm, into] of [
      [() => direct.turn(burst, [], PROMPT), d],
      [() => adapter.turn(burst, adapter.conversation(), PROMPT), a],
      [() => proxy.turn(burst, proxy.conversation(), PROMPT), p],
    ] as const) {
      const t = await arm();
      into.ttft.push(t.firstTextMs);
      into.end.push(t.endMs);
      into.upstream.push(t.upstreamMs);
    }
  }
  note(ctx, "sequential phase", n, settings.sequential);
  console.log(`\n## sequential: one turn at a time, a new conversation each, ${n} turns per arm (direct, adapter, edge proxy in turn)`);
  console.log(
    addedTable([
      { name: "TTFT, to the adapter", direct: d.ttft, gateway: a.ttft },
      { name: "TTFT, through the edge proxy", direct: d.ttft, gateway: p.ttft },
      { name: "EndStream, to the adapter", direct: d.end, gateway: a.end },
      { name: "EndStream, through the edge proxy", direct: d.end, gateway: p.end },
    ]),
  );
  const afterUpstream = (x: ReturnType<typeof samples>): number[] => x.ttft.map((t, i) => t - x.upstream[i]!);
  console.log("\nthe TTFT in two parts: the turn's start to its upstream request reaching the mock, and from there to the first text at the client");
  console.log(
    addedTable([
      { name: "to the upstream request, to the adapter", direct: d.upstream, gateway: a.upstream },
      { name: "to the upstream request, through the edge proxy", direct: d.upstream, gateway: p.upstream },
      { name: "upstream request -> first text, to the adapter", direct: afterUpstream(d), gateway: afterUpstream(a) },
      { name: "upstream request -> first text, through the edge proxy", direct: afterUpstream(d), gateway: afterUpstream(p) },
    ]),
  );
}

async function idleCpu(ctx: Ctx, seconds: number): Promise<Map<string, number>> {
  const before = await ctx.sampler.sample();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = await ctx.sampler.sample();
  const elapsed = (after.at - before.at) / 1000;
  return new Map([...cpuBetween(before, after)].map(([k, v]) => [k, v / elapsed]));
}

async function cpuPerTurn(ctx: Ctx): Promise<void> {
  const idle = await idleCpu(ctx, ctx.settings.quick ? 2 : 5);
  const busBefore: BusCounters = await readBusCounters(ctx.gw.opsUrls);
  const transactionsBefore = await postgresTransactions(ADMIN_DATABASE_URL, ctx.gw.db.name);
  let n = 0;
  const adapterTurns = await cpuDuring(ctx.sampler, async () => {
    for (; n < ctx.settings.cpuTurns && !ctx.deadline.passed(); n++) await ctx.adapter.turn(ctx.burst, ctx.adapter.conversation(), PROMPT);
  });
  const busAfter = await readBusCounters(ctx.gw.opsUrls);
  note(ctx, "CPU phase", n, ctx.settings.cpuTurns);
  console.log(`\n## CPU per turn: ${n} gateway turns one after another (to the adapter), /proc utime+stime per process`);
  console.log("(nats-server and Postgres are shared with whatever else runs on this machine: the idle column is their floor)");
  console.log(cpuTable(adapterTurns.cpu, idle, Math.max(1, n)));
  console.log(`bench process (fake Cursor client + mock upstream): ${formatMs(adapterTurns.selfMs / Math.max(1, n))} ms / turn`);
  console.log(`\n## bus messages per turn (each service's NATS connection, from its /metrics; ${ctx.settings.chunks} upstream chunks per turn)`);
  console.log(busMessagesTable(busBefore, busAfter, Math.max(1, n)));

  // The same turns through the edge proxy (TLS from the client, one HTTP request to the adapter per Cursor request).
  let m = 0;
  const proxyTurns = await cpuDuring(ctx.sampler, async () => {
    for (; m < ctx.settings.cpuTurns && !ctx.deadline.passed(); m++) await ctx.proxy.turn(ctx.burst, ctx.proxy.conversation(), PROMPT);
  });
  note(ctx, "CPU phase through the edge proxy", m, ctx.settings.cpuTurns);
  console.log(`\n## CPU per turn through the edge proxy: ${m} gateway turns one after another`);
  console.log(cpuTable(proxyTurns.cpu, idle, Math.max(1, m)));
  const transactions = (await postgresTransactions(ADMIN_DATABASE_URL, ctx.gw.db.name)) - transactionsBefore;
  console.log(`Postgres transactions per turn (the gateway's database, both phases): ${(transactions / Math.max(1, n + m)).toFixed(1)}`);
}

async function concurrency(ctx: Ctx): Promise<void> {
  const { settings, deadline, direct, adapter, burst } = ctx;
  if (settings.rounds === 0) return;
  const rows: string[][] = [];
  for (const level of settings.concurrency) {
    const d = { ttft: [] as number[], wall: 0, turns: 0, servicesCpuMs: 0, benchCpuMs: 0 };
    const g = { ttft: [] as number[], wall: 0, turns: 0, servicesCpuMs: 0, benchCpuMs: 0 };
    let round = 0;
    for (; round < settings.rounds && !deadline.passed(); round++) {
      for (const [into, one] of [
        [d, () => direct.turn(burst, [], PROMPT)],
        [g, () => adapter.turn(burst, adapter.pooledConversation(), PROMPT)],
      ] as const) {
        const batch = await cpuDuring(ctx.sampler, async () => {
          const start = performance.now();
          const turns = await Promise.all(Array.from({ length: level }, one));
          return { turns, wallMs: performance.now() - start };
        });
        const { turns, wallMs } = batch.result;
        into.wall += wallMs;
        into.benchCpuMs += batch.selfMs;
        into.servicesCpuMs += cpuSum(batch.cpu);
        into.turns += turns.length;
        into.ttft.push(...turns.map((t) => t.firstTextMs));
      }
    }
    note(ctx, `concurrency ${level}`, round, settings.rounds);
    const d50 = percentile(d.ttft, 50);
    const g50 = percentile(g.ttft, 50);
    const perTurn = (ms: number, turns: number): string => formatMs(ms / Math.max(1, turns));
    rows.push([
      String(level),
      String(g.turns),
      formatMs(d50),
      formatMs(g50),
      `+${formatMs(g50 - d50)}`,
      formatRate(d.turns, d.wall),
      formatRate(g.turns, g.wall),
      perTurn(g.servicesCpuMs, g.turns),
      perTurn(g.benchCpuMs, g.turns),
      perTurn(d.benchCpuMs, d.turns),
    ]);
  }
  console.log(`\n## concurrency: N turns at once (new conversations, to the adapter), ${settings.rounds} batches per arm, arms batch by batch`);
  console.log("(CPU ms per turn: the gateway's processes with nats-server and Postgres, and the bench process, which plays Cursor and the upstream, in each arm: all share the 2 cores)");
  console.log(
    renderTable(
      ["at once", "turns", "direct TTFT p50", "gateway TTFT p50", "added", "direct turns/s", "gateway turns/s", "gateway CPU ms/turn", "bench CPU ms/turn (gateway arm)", "bench CPU ms/turn (direct arm)"],
      rows,
    ),
  );
}

async function growth(ctx: Ctx): Promise<void> {
  const { settings, deadline, direct, adapter, burst } = ctx;
  if (settings.growthTurns === 0) return;
  const chat = adapter.conversation();
  const history: ChatMessage[] = [];
  const addedByTurn: number[] = [];
  const d: number[] = [];
  const g: number[] = [];
  for (let i = 0; i < settings.growthTurns && !deadline.passed(); i++) {
    const dt = await direct.turn(burst, history, PROMPT);
    const gt = await adapter.turn(burst, chat, PROMPT);
    history.push({ role: "user", content: PROMPT }, { role: "assistant", content: burst.text });
    d.push(dt.firstTextMs);
    g.push(gt.firstTextMs);
    addedByTurn.push(gt.firstTextMs - dt.firstTextMs);
  }
  const n = addedByTurn.length;
  note(ctx, "growth phase", n, settings.growthTurns);
  const window = Math.max(1, Math.min(10, Math.floor(n / 3)));
  const median = (xs: number[]): number => percentile(xs, 50);
  // Least-squares slope of added TTFT over the turn number.
  const meanX = (n - 1) / 2;
  const meanY = addedByTurn.reduce((s, v) => s + v, 0) / Math.max(1, n);
  let num = 0;
  let den = 0;
  addedByTurn.forEach((y, x) => {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  });
  console.log(`\n## growth: ${n} turns in one conversation (the direct arm sends the same growing history), medians of ${window}-turn windows`);
  console.log(
    renderTable(
      ["window", "direct TTFT", "gateway TTFT", "added"],
      [
        [`turns 1-${window}`, formatMs(median(d.slice(0, window))), formatMs(median(g.slice(0, window))), formatMs(median(addedByTurn.slice(0, window)))],
        [`turns ${n - window + 1}-${n}`, formatMs(median(d.slice(-window))), formatMs(median(g.slice(-window))), formatMs(median(addedByTurn.slice(-window)))],
      ],
    ),
  );
  console.log(`added TTFT slope: ${den > 0 ? (num / den).toFixed(4) : "-"} ms per turn`);
}

async function checkpoint(ctx: Ctx): Promise<void> {
  const { settings, deadline, direct, adapter, burst } = ctx;
  if (settings.checkpointRepeats === 0) return;
  const cold: ArmSamples & { direct: number[]; gateway: number[] } = { name: "cold (store lacks the blobs)", direct: [], gateway: [] };
  const warm: ArmSamples & { direct: number[]; gateway: number[] } = { name: "warm (next turn)", direct: [], gateway: [] };
  // CPU of the cold turns, per process and the bench's own (the fake client answers every KV GET on the same cores).
  const coldCpu = new Map<string, number>();
  let coldBenchMs = 0;
  let i = 0;
  for (; i < settings.checkpointRepeats && !deadline.passed(); i++) {
    const { chat, history } = longConversation(adapter, settings.checkpointMessages);
    cold.direct.push((await direct.turn(burst, history, PROMPT)).firstTextMs);
    const coldTurn = await cpuDuring(ctx.sampler, () => adapter.turn(burst, chat, PROMPT));
    cold.gateway.push(coldTurn.result.firstTextMs);
    for (const [name, ms] of coldTurn.cpu) coldCpu.set(name, (coldCpu.get(name) ?? 0) + ms);
    coldBenchMs += coldTurn.selfMs;
    history.push({ role: "user", content: PROMPT }, { role: "assistant", content: burst.text });
    warm.direct.push((await direct.turn(burst, history, PROMPT)).firstTextMs);
    warm.gateway.push((await adapter.turn(burst, chat, PROMPT)).firstTextMs);
  }
  note(ctx, "checkpoint phase", i, settings.checkpointRepeats);
  console.log(`\n## new turn from a ${settings.checkpointMessages}-message checkpoint: TTFT, ${i} conversations`);
  console.log(addedTable([cold, warm]));
  if (i > 0) {
    const parts = [...coldCpu].filter(([, ms]) => ms / i >= 0.5).map(([name, ms]) => `${name} ${(ms / i).toFixed(0)}`);
    console.log(`CPU per cold turn to its end (ms; the store, the worker and Postgres import and read the history, the adapter fetches it): ${parts.join(", ")}; the bench's fake client ${(coldBenchMs / i).toFixed(0)}`);
  }
}

async function consumerCount(gw: Deployment): Promise<string> {
  const jsm = await jetstreamManager(gw.nc);
  const names = busNames(gw.bus.prefix);
  const parts: string[] = [];
  for (const stream of [names.runsStream, names.commandsStream]) {
    let count = 0;
    try {
      for await (const _ of jsm.consumers.list(stream)) count++;
    } catch {
      count = Number.NaN;
    }
    parts.push(`${stream}: ${count}`);
  }
  return parts.join(", ");
}

async function soak(ctx: Ctx): Promise<void> {
  const { settings } = ctx;
  if (settings.soakSeconds === 0 || ctx.deadline.passed()) return;
  const points: Array<{ label: string; sample: Sample }> = [{ label: "t=0", sample: await ctx.sampler.sample() }];
  const started = performance.now();
  let turns = 0;
  let loading = true;
  const load = (async () => {
    while (loading && !ctx.deadline.passed()) {
      await Promise.all(Array.from({ length: 16 }, () => ctx.adapter.turn(ctx.burst, ctx.adapter.pooledConversation(), PROMPT)));
      turns += 16;
    }
  })();
  // A failed turn stops the load; it is reported (with the gateway's output) where `load` is awaited,
  // not as an unhandled rejection that kills the bench while the samples are taken.
  let failed = false;
  void load.catch(() => (failed = true));
  const total = settings.soakSeconds + settings.soakIdleSeconds;
  for (let t = settings.soakEverySeconds; t <= total && !ctx.deadline.passed() && !failed; t += settings.soakEverySeconds) {
    await new Promise((r) => setTimeout(r, started + t * 1000 - performance.now()));
    if (loading && t >= settings.soakSeconds) {
      loading = false;
      await load;
    }
    points.push({ label: `${t}s${t <= settings.soakSeconds ? " load" : " idle"}`, sample: await ctx.sampler.sample() });
  }
  loading = false;
  await load;
  console.log(`\n## soak: ${settings.soakSeconds} s of 16 turns at once (${turns} turns), then ${settings.soakIdleSeconds} s idle; RSS per process`);
  console.log(rssOverTimeTable(points));
  console.log(`JetStream consumers after the soak: ${await consumerCount(ctx.gw)}`);
}

function tracked(gw: Deployment): Tracked[] {
  const services = Object.entries(gw.services).map(([name, pid]): Tracked => ({ name, pids: async () => [pid] }));
  const extra: Tracked[] = trackedNatsServer(gw.natsUrl, "nats-server (shared)");
  extra.push({ name: "postgres backends", pids: () => postgresBackends(ADMIN_DATABASE_URL, gw.db.name) });
  return [...services, ...extra];
}

async function main(): Promise<void> {
  const settings = readCursorPathSettings(process.env);
  const deadline = new Deadline(settings.maxSeconds);
  process.once("SIGINT", () => {
    deadline.interrupt();
    console.log("\ninterrupted: finishing the current phase step, then cleaning up");
  });
  const machine = machineContext();
  console.log("cursor path: the fake Cursor client through the real multi-process gateway (npm start) vs the same request straight to the mock upstream");
  console.log(`machine: ${machine.cores} cores (${machine.cpuModel}), ${machine.totalMemory} RAM, load avg ${machine.loadAverage}; node ${machine.node}`);
  console.log(`machine speed at the start: ${formatMachineSpeed(await measureMachineSpeed())}`);
  console.log(`settings: ${JSON.stringify(settings)}`);

  const llm = await startMockLlm();
  const paced = await PacedUpstream.start(settings.pacedIntervalMs, [settings.pacedChunks, settings.spreadChunks]);
  let gw: Deployment | undefined;
  const arms: GatewayArm[] = [];
  let failed = false;
  try {
    gw = await startDeployment(llm, { logLevel: process.env["BENCH_LOG_LEVEL"] ?? "warn", configure: (config) => paced.configure(config) });
    console.log(`gateway: ${Object.entries(gw.services).map(([s, pid]) => `${s}=${pid}`).join(" ")}; database ${gw.db.name}, bus prefix ${gw.bus.prefix}`);
    const adapter = GatewayArm.direct(gw, llm, settings.turnTimeoutMs);
    const proxy = await GatewayArm.viaProxy(gw, llm, settings.turnTimeoutMs);
    arms.push(adapter, proxy);
    const sampler = new ProcessSampler(tracked(gw));
    const ctx: Ctx = { settings, deadline, llm, paced, gw, direct: new DirectArm(llm, settings.turnTimeoutMs), adapter, proxy, sampler, burst: textStream(settings.chunks) };
    const rss: Array<{ label: string; sample: Sample }> = [{ label: "before load", sample: await sampler.sample() }];
    const consumersBefore = await consumerCount(gw);

    await sequential(ctx);
    await cpuPerTurn(ctx);
    await concurrency(ctx);
    await growth(ctx);
    await checkpoint(ctx);
    await databaseSize(ctx, ctx.burst, settings.databaseRows, settings.databasePairs);
    await pacedOpenRuns(ctx);
    await spreadOpenRuns(ctx);
    await waitingOpenRuns(ctx);
    rss.push({ label: "after load", sample: await sampler.sample() });
    const consumersAfterLoad = await consumerCount(gw);
    if (settings.settleSeconds > 0) await new Promise((r) => setTimeout(r, settings.settleSeconds * 1000));
    rss.push({ label: `after ${settings.settleSeconds} s idle`, sample: await sampler.sample() });
    console.log(`\n## RSS per process`);
    console.log(rssTable(rss));
    console.log(`JetStream consumers: before load ${consumersBefore}; after load ${consumersAfterLoad}; after the idle settle ${await consumerCount(gw)}`);
    await soak(ctx);
  } catch (err) {
    failed = true;
    console.error(`\nbench failed: ${(err as Error).stack ?? String(err)}`);
    if (gw !== undefined) console.error(`gateway output (last lines):\n${gw.recentOutput()}`);
  } finally {
    for (const arm of arms) await arm.close().catch(() => undefined);
    await gw?.stop();
    await llm.stop();
    await paced.stop();
    if (gw !== undefined) console.log(`\ncleaned up: gateway stopped, database ${gw.db.name} dropped, streams of bus prefix ${gw.bus.prefix} deleted; the services' output is in ${gw.outputFile}`);
  }
  console.log(`machine speed at the end: ${formatMachineSpeed(await measureMachineSpeed())}`);
  if (failed) process.exitCode = 1;
}

await main();
