/**
 * Settings of bench/cursor-path.ts from the environment, with BENCH_QUICK=1
 * shortening every phase (a smoke run of a minute or two), and the deadline
 * that BENCH_MAX_SECONDS sets (phases stop early past it and say so).
 */
import { performance } from "node:perf_hooks";

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
  /** Open runs at once with a paced upstream: levels, deltas per stream, ms between deltas. */
  readonly openRuns: readonly number[];
  readonly pacedChunks: number;
  readonly pacedIntervalMs: number;
  /** Seconds of idle after the load before the last RSS reading. */
  readonly settleSeconds: number;
  /** Soak: seconds of load, then as many of idle, RSS printed every soakEverySeconds (0 = no soak). */
  readonly soakSeconds: number;
  readonly soakEverySeconds: number;
  readonly chunks: number;
  readonly turnTimeoutMs: number;
  readonly maxSeconds: number;
}

export function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`);
  return value;
}

function listSetting(env: NodeJS.ProcessEnv, name: string, fallback: readonly number[]): readonly number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const values = raw.split(",").map((v) => Number(v.trim()));
  if (values.some((v) => !Number.isInteger(v) || v < 1 || v > 5_000)) throw new Error(`${name} must be comma-separated integers in 1..5000, got ${JSON.stringify(raw)}`);
  return values;
}

export function readCursorPathSettings(env: NodeJS.ProcessEnv): CursorPathSettings {
  const quick = env["BENCH_QUICK"] === "1";
  return {
    quick,
    warmup: intSetting(env, "BENCH_WARMUP", quick ? 3 : 10, 0, 1_000),
    sequential: intSetting(env, "BENCH_ITERATIONS", quick ? 20 : 100, 1, 10_000),
    cpuTurns: intSetting(env, "BENCH_CPU_TURNS", quick ? 20 : 100, 1, 10_000),
    concurrency: listSetting(env, "BENCH_CONCURRENCY", [16, 64]),
    rounds: intSetting(env, "BENCH_ROUNDS", quick ? 2 : 5, 0, 1_000),
    growthTurns: intSetting(env, "BENCH_GROWTH_TURNS", quick ? 60 : 300, 0, 10_000),
    checkpointMessages: intSetting(env, "BENCH_CHECKPOINT_MESSAGES", 2_000, 2, 100_000),
    checkpointRepeats: intSetting(env, "BENCH_CHECKPOINT_REPEATS", quick ? 2 : 5, 0, 100),
    openRuns: listSetting(env, "BENCH_OPEN_RUNS", quick ? [16, 64] : [16, 64, 128, 256, 512]),
    pacedChunks: intSetting(env, "BENCH_PACED_CHUNKS", quick ? 30 : 60, 2, 10_000),
    pacedIntervalMs: intSetting(env, "BENCH_PACED_INTERVAL_MS", 33, 1, 10_000),
    settleSeconds: intSetting(env, "BENCH_SETTLE_SECONDS", quick ? 5 : 20, 0, 3_600),
    soakSeconds: intSetting(env, "BENCH_SOAK_SECONDS", quick ? 0 : 60, 0, 86_400),
    soakEverySeconds: intSetting(env, "BENCH_SOAK_EVERY_SECONDS", 5, 1, 3_600),
    chunks: intSetting(env, "BENCH_CHUNKS", 50, 1, 10_000),
    turnTimeoutMs: intSetting(env, "BENCH_TURN_TIMEOUT_MS", 60_000, 1_000, 600_000),
    maxSeconds: intSetting(env, "BENCH_MAX_SECONDS", quick ? 300 : 1_800, 10, 86_400),
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
