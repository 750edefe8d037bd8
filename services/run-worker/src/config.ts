/** run-worker configuration, validated from the environment (only main.ts passes process.env). */
import { z } from "zod";
import {
  commonConfigOf,
  commonEnvSchema,
  ConfigError,
  envInt,
  envMs,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  storeCallerEnvSchema,
  type CommonConfig,
  type Env,
  type MetricsConfig,
} from "@byok/platform";

export const schema = commonEnvSchema.extend({
  ...storeCallerEnvSchema.shape,
  ...metricsEnvSchema.shape,
  /** Name of this worker in logs (default: host + pid + random suffix). */
  WORKER_ID: z.string().regex(/^[A-Za-z0-9_.-]+$/).optional(),
  /** Runs one worker process executes at once. */
  MAX_CONCURRENT_RUNS: envInt(16, { min: 1 }),
  /** How long (ms) the worker waits for the client's StateAck on a barrier. */
  STATE_ACK_TIMEOUT_MS: envMs(30_000),
  /** Model calls: silence (ms; no event, no keepalive) after which the call is unavailable. */
  MODEL_IDLE_TIMEOUT_MS: envMs(15_000),
  /** JetStream run consumer: ack wait (ms) of a delivered run. */
  RUN_ACK_WAIT_MS: envMs(30_000),
  /** JetStream run consumer: a running run is reported in progress this often (ms; shorter than RUN_ACK_WAIT_MS). */
  RUN_WORKING_INTERVAL_MS: envMs(10_000),
  /** JetStream run consumer: deliveries of one run before it fails for good. */
  RUN_MAX_DELIVER: envInt(5, { min: 1 }),
  /** While a run waits for tool results, its client is probed this often (ms; each probe waits at most as long). */
  PROBE_INTERVAL_MS: envMs(10_000),
  /** How long (ms) run.finish is retried while the store is unavailable before the run is left to a later delivery. */
  RUN_FINISH_RETRY_MS: envMs(15_000),
  /** With the ops listener on: how often (ms) the run consumer's info is read for the metrics (also read on each scrape). */
  METRICS_CONSUMER_POLL_MS: envMs(15_000),
});

export interface RunWorkerConfig extends CommonConfig {
  readonly workerId: string | undefined;
  readonly maxConcurrentRuns: number;
  readonly stateAckTimeoutMs: number;
  readonly modelIdleTimeoutMs: number;
  readonly storeTimeoutMs: number;
  readonly runAckWaitMs: number;
  readonly runWorkingIntervalMs: number;
  readonly runMaxDeliver: number;
  readonly probeIntervalMs: number;
  readonly runFinishRetryMs: number;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
  readonly consumerPollMs: number;
}

export function loadConfig(env: Env): RunWorkerConfig {
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
    storeTimeoutMs: parsed.STORE_TIMEOUT_MS,
    runAckWaitMs: parsed.RUN_ACK_WAIT_MS,
    runWorkingIntervalMs: parsed.RUN_WORKING_INTERVAL_MS,
    runMaxDeliver: parsed.RUN_MAX_DELIVER,
    probeIntervalMs: parsed.PROBE_INTERVAL_MS,
    runFinishRetryMs: parsed.RUN_FINISH_RETRY_MS,
    metrics: metricsConfigFrom(parsed),
    consumerPollMs: parsed.METRICS_CONSUMER_POLL_MS,
  };
}
