/**
 * The open-runs phases of bench/cursor-path.ts: many runs of the real gateway
 * open at the same time.
 *
 * - paced: N runs start in the same instant on a paced upstream (a delta every
 *   33 ms); each is on time when its EndStream comes by the direct arm's median
 *   at the same level plus a slack. The start-up of N runs at once and their
 *   ends at once are in what it measures.
 * - waiting on tool results: N runs each get a Read tool call from the upstream
 *   and the fake client holds every result back until all N wait at once; they
 *   stay open for a hold (the client's heartbeats and the worker's probes go
 *   on), then every result is released and each run must finish with its text.
 *   Prints the memory and CPU the gateway's processes spend per open run.
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import type { tools } from "@byok/cursor-protocol";
import type { ExecContext } from "@byok/test-support/fake-cursor";
import { HARNESS_MODEL_ID } from "@byok/test-support/gateway-harness";
import type { MockLlm } from "@byok/test-support/mock-llm";
import { providerStream } from "@byok/test-support/provider-streams";
import type { CursorPathSettings, Deadline } from "./bench-settings.ts";
import { busyTable, rssBytes, type OpenRunsBusy } from "./cursor-path-report.ts";
import { textStream, type DirectArm, type GatewayArm, type PacedUpstream } from "./cursor-arms.ts";
import type { Deployment } from "./deployment.ts";
import { cpuBetween, cpuDuring, ProcessSampler, type Sample } from "./proc-stats.ts";
import { formatMb, formatMs, percentile, renderTable } from "./report.ts";
import { metricsText, metricValue } from "./service-metrics.ts";

export interface OpenRunsContext {
  readonly settings: CursorPathSettings;
  readonly deadline: Deadline;
  readonly llm: MockLlm;
  /** The paced streams' own upstream process. */
  readonly paced: PacedUpstream;
  readonly gw: Deployment;
  readonly direct: DirectArm;
  readonly adapter: GatewayArm;
  readonly sampler: ProcessSampler;
}

const PROMPT = "Say something.";

/** The paced upstream's name in the open-runs phases' CPU samples. */
const UPSTREAM = "paced upstream";

/** Slack of the paced phase: a paced stream is late past this much after the direct arm's median at the same level. */
const ON_TIME_SLACK_MS = 250;

interface PacedPhase {
  readonly title: string;
  readonly levels: readonly number[];
  readonly chunks: number;
  /** ms between two runs' starts (0: all in the same instant). */
  readonly arrivalMs: number;
}

/**
 * One arm at one level: `level` turns, the i-th started i * arrivalMs after the first; each timed from its own start.
 * Also this (bench) process's event-loop delay meanwhile (p99 and max): the fake clients share its one thread, so
 * a late timer or read here is the bench's own lag, not the gateway's.
 */
async function pacedArm(level: number, arrivalMs: number, one: () => Promise<{ endMs: number; firstTextMs: number }>) {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const results = await Promise.allSettled(
    Array.from({ length: level }, async (_, i) => {
      if (arrivalMs > 0 && i > 0) await new Promise((r) => setTimeout(r, i * arrivalMs));
      return one();
    }),
  );
  loop.disable();
  const ok = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  return {
    ends: ok.map((t) => t.endMs),
    firsts: ok.map((t) => t.firstTextMs),
    streaming: ok.map((t) => t.endMs - t.firstTextMs),
    failed: results.length - ok.length,
    loopDelayP99Ms: loop.percentile(99) / 1e6,
    loopDelayMaxMs: loop.max / 1e6,
  };
}

async function pacedPhase(ctx: OpenRunsContext, phase: PacedPhase): Promise<void> {
  const { settings, deadline, direct, adapter } = ctx;
  const paced = ctx.paced.stream(phase.chunks);
  const sampler = new ProcessSampler([...ctx.sampler.tracked, { name: UPSTREAM, pids: async () => [ctx.paced.pid] }]);
  const rows: string[][] = [];
  const busy: OpenRunsBusy[] = [];
  for (const level of phase.levels) {
    if (deadline.passed()) break;
    // The direct arm measures the paced upstream itself at this level (its timers drift under load).
    const d = await pacedArm(level, phase.arrivalMs, () => direct.turn(paced, [], PROMPT));
    const gateway = await cpuDuring(sampler, () => pacedArm(level, phase.arrivalMs, () => adapter.turn(paced, adapter.pooledConversation(), PROMPT)));
    const g = gateway.result;
    // The gateway's processes are the rest of the sample: the upstream is shown on its own row.
    const upstreamMs = gateway.cpu.get(UPSTREAM) ?? Number.NaN;
    gateway.cpu.delete(UPSTREAM);
    busy.push({ level, cpu: gateway.cpu, benchMs: gateway.selfMs, upstreamMs, wallMs: gateway.wallMs });
    const directEnd = percentile(d.ends, 50);
    const directStreaming = percentile(d.streaming, 50);
    const onTime = g.ends.filter((e) => e <= directEnd + ON_TIME_SLACK_MS).length;
    const keptPace = g.streaming.filter((e) => e <= directStreaming + ON_TIME_SLACK_MS).length;
    const late = g.ends.map((e) => e - directEnd);
    rows.push([
      String(level),
      `${onTime}/${level}`,
      `${keptPace}/${level}`,
      String(g.failed),
      formatMs(directEnd),
      formatMs(percentile(g.ends, 50)),
      formatMs(percentile(late, 50)),
      formatMs(percentile(late, 99)),
      `${formatMs(percentile(d.firsts, 50))} / ${formatMs(percentile(g.firsts, 50))} / ${formatMs(percentile(g.firsts, 99))}`,
      `${formatMs(directStreaming)} / ${formatMs(percentile(g.streaming, 50))} / ${formatMs(percentile(g.streaming, 99))}`,
      `${formatMs(d.loopDelayP99Ms)} / ${formatMs(g.loopDelayP99Ms)} (max ${formatMs(d.loopDelayMaxMs)} / ${formatMs(g.loopDelayMaxMs)})`,
    ]);
    if (g.failed > 0 || keptPace < level / 2) break;
  }
  const nominal = (phase.chunks - 1) * settings.pacedIntervalMs;
  console.log(
    `\n## ${phase.title}: paced upstream (${phase.chunks} deltas, one per ${settings.pacedIntervalMs} ms = ${nominal} ms nominal), against the direct arm's median at the same level + ${ON_TIME_SLACK_MS} ms`,
  );
  console.log(
    "(each run timed from its own start; on time: EndStream by then, start-up included; kept pace: first text -> EndStream by then; stops at a failure or when fewer than half kept pace)",
  );
  console.log(renderTable(["runs", "on time", "kept pace", "failed", "direct end p50", "gateway end p50", "gateway late p50", "gateway late p99", "first text: direct p50 / gateway p50 / p99", "first text -> end: direct p50 / gateway p50 / p99", "bench loop delay p99: direct / gateway arm"], rows));
  console.log("\ncores busy during the gateway arm (CPU ms per wall ms, /proc utime+stime; 2.0 = both cores of this machine)");
  console.log(busyTable(busy));
}

/** N runs started in the same instant: their start-up and their ends come all at once. */
export function pacedOpenRuns(ctx: OpenRunsContext): Promise<void> {
  return pacedPhase(ctx, { title: "open runs at once", levels: ctx.settings.openRuns, chunks: ctx.settings.pacedChunks, arrivalMs: 0 });
}

/**
 * N runs whose starts arrive one every `spreadArrivalMs`, on streams long enough that all N are open
 * together for a while: how many paced streams the machine holds at once when they do not all start
 * in the same instant.
 */
export function spreadOpenRuns(ctx: OpenRunsContext): Promise<void> {
  const { settings } = ctx;
  return pacedPhase(ctx, {
    title: `open runs arriving one every ${settings.spreadArrivalMs} ms`,
    levels: settings.spreadRuns,
    chunks: settings.spreadChunks,
    arrivalMs: settings.spreadArrivalMs,
  });
}

/** Resolves when `count` calls of `arrived()` happened, or rejects after `timeoutMs`. */
class Arrivals {
  #seen = 0;
  readonly #count: number;
  readonly all: Promise<void>;
  #resolve!: () => void;

  constructor(count: number, timeoutMs: number, what: string) {
    this.#count = count;
    let timer: NodeJS.Timeout | undefined;
    this.all = new Promise<void>((resolve, reject) => {
      this.#resolve = () => {
        clearTimeout(timer);
        resolve();
      };
      timer = setTimeout(() => reject(new Error(`${what}: ${this.#seen} of ${count} within ${timeoutMs} ms`)), timeoutMs);
    });
  }

  arrived(): void {
    this.#seen += 1;
    if (this.#seen === this.#count) this.#resolve();
  }

  get seen(): number {
    return this.#seen;
  }
}

/** nodejs_heap_size_used_bytes of each service with a /metrics listener (NaN where it cannot be read). */
async function heapUsed(opsUrls: Readonly<Record<string, string>>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [service, url] of Object.entries(opsUrls)) out.set(service, metricValue(await metricsText(url), "nodejs_heap_size_used_bytes"));
  return out;
}

const KB = 1024;
/** Seconds of idle measured before each level of the waiting phase. */
const IDLE_SECONDS = 3;

/** CPU ms per second of the named processes together between two samples. */
function cpuRate(from: Sample, to: Sample, names: readonly string[]): number {
  const cpu = cpuBetween(from, to);
  return names.reduce((sum, name) => sum + (cpu.get(name) ?? Number.NaN), 0) / ((to.at - from.at) / 1000);
}

/** CPU ms per second per 100 open runs of the named processes during the hold, above their idle rate measured before the level. */
function holdCpuPer100(l: WaitingLevel, names: readonly string[]): string {
  const above = cpuRate(l.waiting, l.held, names) - cpuRate(l.idleStart, l.before, names);
  return ((above / l.level) * 100).toFixed(1);
}

function perRunKb(before: number | undefined, after: number | undefined, runs: number): string {
  if (before === undefined || after === undefined || !Number.isFinite(before) || !Number.isFinite(after)) return "-";
  return ((after - before) / KB / runs).toFixed(1);
}

interface WaitingLevel {
  readonly level: number;
  readonly completed: number;
  readonly failures: readonly string[];
  readonly openMs: number;
  readonly releaseToEnd: readonly number[];
  readonly idleStart: Sample;
  readonly before: Sample;
  readonly waiting: Sample;
  readonly held: Sample;
  readonly heapBefore: ReadonlyMap<string, number>;
  readonly heapWaiting: ReadonlyMap<string, number>;
}

/** One level of the waiting phase: `level` runs each held on a tool result, then all released. */
async function waitingLevel(ctx: OpenRunsContext, level: number): Promise<WaitingLevel> {
  const { llm, adapter, settings } = ctx;
  const timeoutMs = settings.turnTimeoutMs;
  // The processes' own idle rate (timers, metrics, NATS pings), taken off the hold's CPU.
  const idleStart = await ctx.sampler.sample();
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const before = await ctx.sampler.sample();
  const heapBefore = await heapUsed(ctx.gw.opsUrls);
  const nonce = performance.now().toFixed(0);
  for (let i = 0; i < level; i++) {
    const call = { id: `call_wait_${nonce}_${i}`, name: "Read", args: { path: `/home/dev/project/src/module-${i}.ts` } };
    llm.enqueue(providerStream("openai-chat", `chatcmpl-wait-${nonce}-${i}`, { call }, { input: 120, output: 18 }));
  }
  const waiting = new Arrivals(level, timeoutMs, "runs waiting on their tool result");
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let releasedAt = 0;
  const answer = async (ctx: ExecContext): Promise<void> => {
    const path = (ctx.exec.message.value as tools.ReadArgs).path;
    waiting.arrived();
    await released;
    const content = `// ${path}\nexport const answer = 42;\n`;
    await ctx.reply({
      message: {
        case: "readResult",
        value: { result: { case: "success", value: { path, totalLines: 2, fileSize: BigInt(Buffer.byteLength(content)), output: { case: "content", value: content } } } },
      },
    });
  };
  const started = performance.now();
  const final = textStream(5);
  const runs = Array.from({ length: level }, async () => {
    const run = adapter.pooledConversation().send(PROMPT, { modelId: HARNESS_MODEL_ID, onExec: { readArgs: answer } });
    // Held as long as the phase holds them; from the release on, a run has the turn timeout to end.
    const late = released.then(
      () =>
        new Promise<never>((_, reject) =>
          setTimeout(() => {
            run.disconnect();
            reject(new Error(`run ${run.requestId} did not end within ${timeoutMs} ms of its release`));
          }, timeoutMs).unref(),
        ),
    );
    const result = await Promise.race([run.finished, late]);
    const problems: string[] = [];
    if (result.end.kind !== "ok") problems.push(`ended ${JSON.stringify(result.end)}`);
    if (result.violations.length > 0) problems.push(`violations: ${result.violations.join("; ")}`);
    if (!result.text.endsWith(final.text)) problems.push(`text ends differently (${result.text.length} chars)`);
    if (problems.length > 0) throw new Error(`run ${result.requestId}: ${problems.join(", ")}`);
    return performance.now() - releasedAt;
  });
  const settled = Promise.allSettled(runs);
  let openMs = Number.NaN;
  try {
    await waiting.all;
    openMs = performance.now() - started;
  } catch (err) {
    console.log(`note: ${(err as Error).message}; releasing the ones that wait`);
  }
  const waitingSample = await ctx.sampler.sample();
  const heapWaiting = await heapUsed(ctx.gw.opsUrls);
  if (waiting.seen === level) await new Promise((r) => setTimeout(r, settings.waitingHoldSeconds * 1000));
  const held = await ctx.sampler.sample();
  for (let i = 0; i < level; i++) llm.enqueue(final.response);
  releasedAt = performance.now();
  release();
  const results = await settled;
  const ok = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failures = results.flatMap((r) => (r.status === "rejected" ? [(r.reason as Error).message] : []));
  return { level, completed: ok.length, failures, openMs, releaseToEnd: ok, idleStart, before, waiting: waitingSample, held, heapBefore, heapWaiting };
}

export async function waitingOpenRuns(ctx: OpenRunsContext): Promise<void> {
  const { settings, deadline } = ctx;
  if (settings.waitingRuns.length === 0) return;
  const levels: WaitingLevel[] = [];
  for (const level of settings.waitingRuns) {
    if (deadline.passed()) break;
    const result = await waitingLevel(ctx, level);
    levels.push(result);
    if (result.completed < level) break;
  }
  console.log(
    `\n## open runs waiting on tool results: N runs each get a Read call and the client holds every result until all N wait, ${settings.waitingHoldSeconds} s held open (client heartbeats and the worker's probes go on), then all released`,
  );
  console.log(
    renderTable(
      ["runs", "completed", "all waiting after", "release -> EndStream p50 / p99"],
      levels.map((l) => [String(l.level), `${l.completed}/${l.level}`, `${formatMs(l.openMs)} ms`, `${formatMs(percentile(l.releaseToEnd, 50))} / ${formatMs(percentile(l.releaseToEnd, 99))} ms`]),
    ),
  );
  for (const l of levels) for (const f of l.failures.slice(0, 3)) console.log(`failed (${l.level} runs): ${f}`);
  const names = [...(levels[0]?.before.byName.keys() ?? [])];
  console.log("\nper open run while all wait: RSS growth (KB), heap-used growth (KB, from /metrics), CPU during the hold above the idle rate measured before (ms per second per 100 runs)");
  const rows = names.map((name) => [
    name,
    ...levels.flatMap((l) => [
      perRunKb(rssBytes(l.before, name), rssBytes(l.waiting, name), l.level),
      perRunKb(l.heapBefore.get(name), l.heapWaiting.get(name), l.level),
      holdCpuPer100(l, [name]),
    ]),
  ]);
  // The Postgres backends' RSS counts the shared buffers each one touched and their number follows the
  // store's pool, not the open runs: their row is shown, the RSS total leaves them out (the CPU total does not).
  const counted = names.filter((n) => !n.startsWith("postgres"));
  const total = (sample: Sample): number => counted.reduce((s, n) => s + (rssBytes(sample, n) ?? 0), 0);
  rows.push(["total (RSS: services and nats-server)", ...levels.flatMap((l) => [perRunKb(total(l.before), total(l.waiting), l.level), "", holdCpuPer100(l, names)])]);
  console.log(renderTable(["process", ...levels.flatMap((l) => [`${l.level}: RSS KB/run`, "heap KB/run", "CPU ms/s per 100"])], rows));
  console.log(`RSS of the services and nats-server with every run waiting: ${levels.map((l) => `${l.level} runs ${formatMb(total(l.waiting))} (before ${formatMb(total(l.before))})`).join("; ")}`);
}
