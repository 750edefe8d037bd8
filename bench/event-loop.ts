/**
 * Does one huge conversation stall everyone else on the same adapter? (issue
 * 15, heavy work off the event loop.)
 *
 * The real multi-process gateway (bench/support/deployment.ts: `npm start`,
 * every service its own process) runs twice: with HISTORY_IN_POOL=1 (long
 * client histories read in the adapter's piscina CPU pool) and with
 * HISTORY_IN_POOL=0 (read on the adapter's event loop). In each, a round is
 * 16 streaming turns (paced upstream) while one turn starts from a
 * checkpoint of BENCH_IMPORT_MESSAGES (2,000) messages that nobody has
 * imported yet (its blobs come from the client over KV GET). The adapter's and
 * the run worker's event-loop delay over the round come from their /metrics
 * (prom-client's nodejs_eventloop_lag_* gauges: perf_hooks
 * monitorEventLoopDelay, reset at every scrape); the 16 streams' time to
 * first text shows what the delay costs them. Nothing here asserts on timings.
 *
 *   node bench/event-loop.ts
 *   npm run bench -- event-loop
 *
 * Environment (all optional): BENCH_ROUNDS (3), BENCH_STREAMS (16),
 * BENCH_IMPORT_MESSAGES (2000), BENCH_PACED_CHUNKS (30),
 * BENCH_PACED_INTERVAL_MS (33), BENCH_TURN_TIMEOUT_MS (120000).
 */
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { intSetting } from "./support/settings.ts";
import { GatewayArm, longConversation, textStream } from "./support/cursor-arms.ts";
import { startDeployment, type Deployment } from "./support/deployment.ts";
import { formatMs, machineContext, percentile, renderTable } from "./support/report.ts";

const settings = {
  rounds: intSetting("BENCH_ROUNDS", 3, { min: 1, max: 100 }),
  streams: intSetting("BENCH_STREAMS", 16, { min: 1, max: 256 }),
  importMessages: intSetting("BENCH_IMPORT_MESSAGES", 2_000, { min: 10, max: 100_000 }),
  pacedChunks: intSetting("BENCH_PACED_CHUNKS", 30, { min: 1, max: 10_000 }),
  pacedIntervalMs: intSetting("BENCH_PACED_INTERVAL_MS", 33, { min: 1, max: 10_000 }),
  turnTimeoutMs: intSetting("BENCH_TURN_TIMEOUT_MS", 120_000, { min: 1_000, max: 600_000 }),
};

interface LoopDelay {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** The event-loop gauges of one service (ms); reading them resets them. */
async function loopDelay(deployment: Deployment, service: string): Promise<LoopDelay> {
  const url = deployment.opsUrls[service];
  if (url === undefined) throw new Error(`no ops listener for ${service}`);
  const text = await (await fetch(`${url}/metrics`)).text();
  const gauge = (name: string): number => {
    const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    if (line === undefined) throw new Error(`${service} /metrics has no ${name}`);
    return Number(line.slice(line.lastIndexOf(" ") + 1)) * 1_000;
  };
  return { p50: gauge("nodejs_eventloop_lag_p50_seconds"), p99: gauge("nodejs_eventloop_lag_p99_seconds"), max: gauge("nodejs_eventloop_lag_max_seconds") };
}

interface ModeResult {
  readonly mode: string;
  readonly adapter: LoopDelay[];
  readonly worker: LoopDelay[];
  readonly streamTtft: number[];
  readonly importTurnMs: number[];
}

async function runMode(llm: MockLlm, inPool: boolean): Promise<ModeResult> {
  const mode = inPool ? "HISTORY_IN_POOL=1 (piscina)" : "HISTORY_IN_POOL=0 (event loop)";
  const deployment = await startDeployment(llm, { env: { HISTORY_IN_POOL: inPool ? "1" : "0" } });
  const result: ModeResult = { mode, adapter: [], worker: [], streamTtft: [], importTurnMs: [] };
  const arm = GatewayArm.direct(deployment, llm, settings.turnTimeoutMs);
  try {
    const paced = textStream(settings.pacedChunks, settings.pacedIntervalMs);
    const burst = textStream(50);
    // Warm-up: every service has served a turn and the pool has started a thread.
    await arm.turn(burst, arm.conversation(), "warm up");
    const warm = longConversation(arm, 100);
    await arm.turn(burst, warm.chat, "warm up with history");
    for (let round = 0; round < settings.rounds; round++) {
      await loopDelay(deployment, "cursor-adapter");
      await loopDelay(deployment, "run-worker");
      const long = longConversation(arm, settings.importMessages);
      const streams = Array.from({ length: settings.streams }, (_, i) => arm.turn(paced, arm.conversation(), `stream ${round}-${i}`));
      const started = performance.now();
      const imported = arm.turn(burst, long.chat, "what did we say?").then(() => performance.now() - started);
      const timings = await Promise.all(streams);
      result.importTurnMs.push(await imported);
      result.adapter.push(await loopDelay(deployment, "cursor-adapter"));
      result.worker.push(await loopDelay(deployment, "run-worker"));
      result.streamTtft.push(...timings.map((t) => t.firstTextMs));
    }
  } finally {
    await arm.close();
    await deployment.stop();
  }
  return result;
}

function worst(delays: readonly LoopDelay[], key: keyof LoopDelay): number {
  return Math.max(...delays.map((d) => d[key]));
}

const llm = await startMockLlm();
try {
  const machine = machineContext();
  console.log("event loop: 16 streaming turns beside one turn from a never-imported long checkpoint, long histories read in the CPU pool vs on the event loop");
  console.log(`machine: ${machine.cores} cores (${machine.cpuModel}), load avg ${machine.loadAverage}; node ${machine.node}`);
  console.log(`settings: ${JSON.stringify(settings)}\n`);
  const results = [await runMode(llm, true), await runMode(llm, false)];
  const rows = results.map((r) => [
    r.mode,
    formatMs(worst(r.adapter, "p50")),
    formatMs(worst(r.adapter, "p99")),
    formatMs(worst(r.adapter, "max")),
    formatMs(worst(r.worker, "p99")),
    formatMs(percentile(r.streamTtft, 50)),
    formatMs(percentile(r.streamTtft, 99)),
    formatMs(percentile(r.importTurnMs, 50)),
  ]);
  console.log(`worst round of ${settings.rounds} (event-loop delay, ms; prom-client's monitorEventLoopDelay gauges over the round)`);
  console.log(
    renderTable(
      ["mode", "adapter loop p50", "adapter loop p99", "adapter loop max", "worker loop p99", "streams TTFT p50", "streams TTFT p99", "long-checkpoint turn p50"],
      rows,
    ),
  );
} finally {
  await llm.stop();
}
