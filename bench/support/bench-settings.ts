/**
 * Settings of bench/cursor-path.ts from the environment, with BENCH_QUICK=1
 * shortening every phase (a smoke run of a minute or two), and the deadline
 * that BENCH_MAX_SECONDS sets (phases stop early past it and say so).
 */
import { performance } from "node:perf_hooks";
import { intSetting, listSetting } from "./settings.ts";

export interface CursorPathSettings {
  readonly quick: boolean;
  readonly warmup: number;
  /** Sequential turns per arm (direct, adapter, edge proxy). */
  readonly sequential: number;
  /** Gateway-only turns for CPU per turn and bus messages per turn. */
  readonly cpuTurns: number;
  /** Concurrency levels and rounds (batches) per level and arm. */
  readonly concurrency: readonly number[];
  readonly rounds: number;
  /** Turns in the one long conversation. */
  readonly growthTurns: number;
  readonly checkpointMessages: number;
  readonly checkpointRepeats: number;
  /** Rows of other conversations the database-size phase adds (0: no such phase), and the pairs of turns it measures per step. */
  readonly databaseRows: number;
  readonly databasePairs: number;
  /** Open runs at once with a paced upstream: levels, deltas per stream, ms between deltas. */
  readonly openRuns: readonly number[];
  readonly pacedChunks: number;
  readonly pacedIntervalMs: number;
  /** Open runs on the paced upstream arriving one every spreadArrivalMs: levels, deltas per stream. */
  readonly spreadRuns: readonly number[];
  readonly spreadArrivalMs: number;
  readonly spreadChunks: number;
  /** Open runs waiting on tool results: levels, and seconds all of a level are held open. */
  readonly waitingRuns: readonly number[];
  readonly waitingHoldSeconds: number;
  /** Seconds of idle after the load before the last RSS reading. */
  readonly settleSeconds: number;
  /** Soak: seconds of load, then soakIdleSeconds of idle, RSS printed every soakEverySeconds (0 = no soak). */
  readonly soakSeconds: number;
  readonly soakIdleSeconds: number;
  readonly soakEverySeconds: number;
  readonly chunks: number;
  readonly turnTimeoutMs: number;
  readonly maxSeconds: number;
}

export function readCursorPathSettings(env: NodeJS.ProcessEnv): CursorPathSettings {
  const quick = env["BENCH_QUICK"] === "1";
  return {
    quick,
    warmup: intSetting("BENCH_WARMUP", quick ? 3 : 10, { min: 0, max: 1_000 }, env),
    sequential: intSetting("BENCH_ITERATIONS", quick ? 20 : 100, { min: 1, max: 10_000 }, env),
    cpuTurns: intSetting("BENCH_CPU_TURNS", quick ? 20 : 100, { min: 1, max: 10_000 }, env),
    concurrency: listSetting("BENCH_CONCURRENCY", [16, 64], {}, env),
    rounds: intSetting("BENCH_ROUNDS", quick ? 2 : 5, { min: 0, max: 1_000 }, env),
    growthTurns: intSetting("BENCH_GROWTH_TURNS", quick ? 60 : 300, { min: 0, max: 10_000 }, env),
    checkpointMessages: intSetting("BENCH_CHECKPOINT_MESSAGES", 2_000, { min: 2, max: 100_000 }, env),
    checkpointRepeats: intSetting("BENCH_CHECKPOINT_REPEATS", quick ? 2 : 5, { min: 0, max: 100 }, env),
    databaseRows: intSetting("BENCH_DATABASE_ROWS", quick ? 20_000 : 200_000, { min: 0, max: 10_000_000 }, env),
    databasePairs: intSetting("BENCH_DATABASE_PAIRS", quick ? 15 : 40, { min: 0, max: 10_000 }, env),
    openRuns: listSetting("BENCH_OPEN_RUNS", quick ? [16, 64] : [16, 64, 128, 256, 512], {}, env),
    pacedChunks: intSetting("BENCH_PACED_CHUNKS", quick ? 30 : 60, { min: 2, max: 10_000 }, env),
    pacedIntervalMs: intSetting("BENCH_PACED_INTERVAL_MS", 33, { min: 1, max: 10_000 }, env),
    spreadRuns: listSetting("BENCH_SPREAD_RUNS", quick ? [128] : [256, 512], {}, env),
    // 40 starts a second, within what this machine starts at once (about 90-130 turns/s), and streams
    // longer than the arrivals of 512 runs (12.8 s), so all of them are open together for a while.
    spreadArrivalMs: intSetting("BENCH_SPREAD_ARRIVAL_MS", 25, { min: 0, max: 10_000 }, env),
    spreadChunks: intSetting("BENCH_SPREAD_CHUNKS", quick ? 150 : 450, { min: 2, max: 100_000 }, env),
    waitingRuns: listSetting("BENCH_WAITING_RUNS", quick ? [64] : [128, 512], {}, env),
    waitingHoldSeconds: intSetting("BENCH_WAITING_HOLD_SECONDS", quick ? 3 : 15, { min: 0, max: 3_600 }, env),
    settleSeconds: intSetting("BENCH_SETTLE_SECONDS", quick ? 5 : 20, { min: 0, max: 3_600 }, env),
    soakSeconds: intSetting("BENCH_SOAK_SECONDS", quick ? 0 : 60, { min: 0, max: 86_400 }, env),
    // Past the adapter's END_GRACE_MS (60 s), so ended runs are forgotten within the idle phase.
    soakIdleSeconds: intSetting("BENCH_SOAK_IDLE_SECONDS", 90, { min: 0, max: 86_400 }, env),
    soakEverySeconds: intSetting("BENCH_SOAK_EVERY_SECONDS", 5, { min: 1, max: 3_600 }, env),
    chunks: intSetting("BENCH_CHUNKS", 50, { min: 1, max: 10_000 }, env),
    turnTimeoutMs: intSetting("BENCH_TURN_TIMEOUT_MS", 60_000, { min: 1_000, max: 600_000 }, env),
    maxSeconds: intSetting("BENCH_MAX_SECONDS", quick ? 300 : 1_800, { min: 10, max: 86_400 }, env),
  };
}

export class Deadline {
  readonly #end: number;
  #interrupted = false;

  constructor(maxSeconds: number) {
    this.#end = performance.now() + maxSeconds * 1000;
  }

  interrupt(): void {
    this.#interrupted = true;
  }

  passed(): boolean {
    return this.#interrupted || performance.now() > this.#end;
  }
}
