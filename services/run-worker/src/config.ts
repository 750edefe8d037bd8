/** run-worker configuration, validated from the environment (only main.ts passes process.env). */
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  commonConfigOf,
  commonEnvSchema,
  ConfigError,
  envFlag,
  envInt,
  envMs,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  readTextFile,
  runStreamsEnvSchema,
  storeCallerEnvSchema,
  type CommonConfig,
  type Env,
  type MetricsConfig,
  type ReadTextFile,
} from "@byok/platform";
import type { CompactionConfig } from "./compaction.ts";

const REPO_COMPACTION_PROMPT_DIR = fileURLToPath(new URL("../../../prompt/compaction", import.meta.url));
/** The most output tokens a compaction summary may take. */
export const SUMMARY_MAX_TOKENS_LIMIT = 4_096;

export const schema = commonEnvSchema.extend({
  ...storeCallerEnvSchema.shape,
  ...runStreamsEnvSchema.shape,
  ...metricsEnvSchema.shape,
  /** Name of this worker in logs (default: host + pid + random suffix). */
  WORKER_ID: z.string().regex(/^[A-Za-z0-9_.-]+$/).optional(),
  /**
   * Runs one worker process holds open at once. Most of an open run's life is
   * waiting (a paced upstream, tool results, the client's acks), so this is far
   * above the core count; each open run costs little memory (its history and a
   * command subscription).
   */
  MAX_CONCURRENT_RUNS: envInt(512, { min: 1 }),
  /** How long (ms) the worker waits for the client's StateAck on a barrier. */
  STATE_ACK_TIMEOUT_MS: envMs(30_000),
  /** Model calls: silence (ms; no event, no keepalive) after which the call is unavailable. */
  MODEL_IDLE_TIMEOUT_MS: envMs(15_000),
  /**
   * The delta window (ms), one for all runs of the worker: text/thinking deltas of one block that
   * arrive while it is open travel as one ClientEvent when it ends (the first delta of a block is
   * never delayed; 0 = one ClientEvent per ModelEvent delta).
   */
  CLIENT_DELTA_COALESCE_MS: envMs(4, 0),
  /** JetStream run consumer: ack wait (ms) of a delivered run. */
  RUN_ACK_WAIT_MS: envMs(30_000),
  /** JetStream run consumer: a running run is reported in progress this often (ms; shorter than RUN_ACK_WAIT_MS). */
  RUN_WORKING_INTERVAL_MS: envMs(10_000),
  /** JetStream run consumer: deliveries of one run before it fails for good. */
  RUN_MAX_DELIVER: envInt(5, { min: 1 }),
  /** While a run waits for tool results, its client is probed this often (ms; each probe waits at most as long). */
  PROBE_INTERVAL_MS: envMs(10_000),
  /** How long (ms) run.finish of a failed or cancelled run is retried while the store is unavailable before the run is left to a later delivery (a completed run's is retried until recorded). */
  RUN_FINISH_RETRY_MS: envMs(15_000),
  /**
   * Send a run's first model call while run.begin is still in the store, when the worker knows the
   * history the run starts from (a new conversation, or the revision it held last) and this is the
   * run's first take. Its events are held until run.begin answered and the request is exactly the one
   * the run would make; otherwise it is cancelled unseen (a wasted upstream request). Off by default:
   * on 2 cores it saved about 1 ms of time to first text and cost about 1.5 ms of CPU per turn
   * (docs/performance.md). With cores to spare the begin and the call can overlap (not measured here).
   */
  EARLY_MODEL_CALL: envFlag(false),
  /** Compact a history whose next model call would not fit the context budget (and on a context overflow). */
  COMPACTION_ENABLED: envFlag(true),
  /** Share of the context window (percent) kept free: budget = window - reserve. */
  COMPACTION_RESERVE_PERCENT: envInt(10, { min: 0, max: 90 }),
  /** Newest turns a compaction keeps verbatim after the summary. */
  COMPACTION_TAIL_TURNS: envInt(1, { min: 1, max: 50 }),
  /** Output tokens of the summary call (at most 4096). */
  COMPACTION_SUMMARY_MAX_TOKENS: envInt(SUMMARY_MAX_TOKENS_LIMIT, { min: 256, max: SUMMARY_MAX_TOKENS_LIMIT }),
  /** Folder of the compaction prompt (system.md, request.md). */
  COMPACTION_PROMPT_DIR: z.string().min(1).default(REPO_COMPACTION_PROMPT_DIR),
  /** With the ops listener on: how often (ms) the run consumer's info is read for the metrics (also read on each scrape). */
  METRICS_CONSUMER_POLL_MS: envMs(15_000),
});

export interface RunWorkerConfig extends CommonConfig {
  readonly workerId: string | undefined;
  readonly maxConcurrentRuns: number;
  readonly stateAckTimeoutMs: number;
  readonly modelIdleTimeoutMs: number;
  /** Window (ms) for joining deltas of one block into one ClientEvent; 0 = off. */
  readonly clientDeltaCoalesceMs: number;
  readonly storeTimeoutMs: number;
  readonly runAckWaitMs: number;
  readonly runWorkingIntervalMs: number;
  readonly runMaxDeliver: number;
  readonly probeIntervalMs: number;
  readonly runFinishRetryMs: number;
  /** EARLY_MODEL_CALL: a first delivery's first model call goes out while run.begin runs. */
  readonly earlyModelCall: boolean;
  /** undefined when COMPACTION_ENABLED is off. */
  readonly compaction: CompactionConfig | undefined;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
  readonly consumerPollMs: number;
  /** JETSTREAM_REPLICAS; undefined = decided from the cluster (packages/platform/src/run-streams.ts). */
  readonly streamReplicas: number | undefined;
}

export function loadConfig(env: Env, readFile: ReadTextFile = readTextFile): RunWorkerConfig {
  const parsed = parseEnv(schema, env, "run-worker");
  if (parsed.RUN_WORKING_INTERVAL_MS >= parsed.RUN_ACK_WAIT_MS) {
    throw new ConfigError("run-worker: RUN_WORKING_INTERVAL_MS must be shorter than RUN_ACK_WAIT_MS");
  }
  return {
    ...commonConfigOf(parsed),
    workerId: parsed.WORKER_ID,
    maxConcurrentRuns: parsed.MAX_CONCURRENT_RUNS,
    stateAckTimeoutMs: parsed.STATE_ACK_TIMEOUT_MS,
    modelIdleTimeoutMs: parsed.MODEL_IDLE_TIMEOUT_MS,
    clientDeltaCoalesceMs: parsed.CLIENT_DELTA_COALESCE_MS,
    earlyModelCall: parsed.EARLY_MODEL_CALL,
    storeTimeoutMs: parsed.STORE_TIMEOUT_MS,
    runAckWaitMs: parsed.RUN_ACK_WAIT_MS,
    runWorkingIntervalMs: parsed.RUN_WORKING_INTERVAL_MS,
    runMaxDeliver: parsed.RUN_MAX_DELIVER,
    probeIntervalMs: parsed.PROBE_INTERVAL_MS,
    runFinishRetryMs: parsed.RUN_FINISH_RETRY_MS,
    compaction: parsed.COMPACTION_ENABLED
      ? {
          reservePercent: parsed.COMPACTION_RESERVE_PERCENT,
          tailTurns: parsed.COMPACTION_TAIL_TURNS,
          summaryMaxTokens: parsed.COMPACTION_SUMMARY_MAX_TOKENS,
          prompt: { system: promptFile(parsed.COMPACTION_PROMPT_DIR, "system.md", readFile), request: promptFile(parsed.COMPACTION_PROMPT_DIR, "request.md", readFile) },
        }
      : undefined,
    metrics: metricsConfigFrom(parsed),
    consumerPollMs: parsed.METRICS_CONSUMER_POLL_MS,
    streamReplicas: parsed.JETSTREAM_REPLICAS,
  };
}

function promptFile(dir: string, name: string, readFile: ReadTextFile): string {
  let text: string;
  try {
    text = readFile(`${dir}/${name}`).trim();
  } catch (cause) {
    throw new ConfigError(`run-worker: cannot read the compaction prompt ${dir}/${name}: ${(cause as Error).message}`, { cause });
  }
  if (text === "") throw new ConfigError(`run-worker: the compaction prompt ${dir}/${name} is empty`);
  return text;
}
