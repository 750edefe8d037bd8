/** run-worker configuration, validated from the environment (only main.ts passes process.env). */
import { z } from "zod";
import { commonEnvSchema, ConfigError, metricsConfigFrom, metricsEnvSchema, parseEnv, type Env, type MetricsConfig } from "@byok/platform";

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const schema = commonEnvSchema.extend({
  /** Name of this worker in logs (default: host + pid + random suffix). */
  WORKER_ID: z.string().regex(/^[A-Za-z0-9_.-]+$/).optional(),
  /** Runs one worker process executes at once. */
  MAX_CONCURRENT_RUNS: positiveInt(16),
  /** How long the worker waits for the client's StateAck on a barrier. */
  STATE_ACK_TIMEOUT_MS: positiveInt(30_000),
  /** Model calls: silence (no event, no keepalive) after which the call is unavailable. */
  MODEL_IDLE_TIMEOUT_MS: positiveInt(15_000),
  /** Timeout of one store request. */
  STORE_TIMEOUT_MS: positiveInt(10_000),
  /** JetStream run consumer: ack wait, in-progress interval and max deliveries. */
  RUN_ACK_WAIT_MS: positiveInt(30_000),
  RUN_WORKING_INTERVAL_MS: positiveInt(10_000),
  RUN_MAX_DELIVER: positiveInt(5),
  /** While a run waits for tool results, its client is probed this often (each probe waits at most as long). */
  PROBE_INTERVAL_MS: positiveInt(10_000),
  /** How long run.finish is retried while the store is unavailable before the run is left to a later delivery. */
  RUN_FINISH_RETRY_MS: positiveInt(15_000),
  /** With the ops listener on: how often the run consumer's info is read for the metrics (also read on each scrape). */
  METRICS_CONSUMER_POLL_MS: positiveInt(15_000),
}).extend(metricsEnvSchema.shape);

export interface RunWorkerConfig {
  readonly natsUrl: string;
  readonly busPrefix: string;
  readonly logLevel: string;
  readonly logDebugContent: boolean;
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
  /** Ops listener (/metrics, /healthz); METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
  readonly consumerPollMs: number;
}

export function loadConfig(env: Env): RunWorkerConfig {
  const parsed = parseEnv(schema, env, "run-worker");
  if (parsed.RUN_WORKING_INTERVAL_MS >= parsed.RUN_ACK_WAIT_MS) {
    throw new ConfigError("run-worker: RUN_WORKING_INTERVAL_MS must be shorter than RUN_ACK_WAIT_MS");
  }
  return {
    natsUrl: parsed.NATS_URL,
    busPrefix: parsed.BUS_PREFIX,
    logLevel: parsed.LOG_LEVEL,
    logDebugContent: parsed.LOG_DEBUG_CONTENT,
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
