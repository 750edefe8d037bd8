/**
 * Configuration of the cursor adapter: the environment (validated once) and
 * the BYOK model list of the team's gateway configuration file (read through
 * `readFile`, so tests need no file). Only main.ts passes `process.env` in.
 */
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  commonConfigOf,
  commonEnvSchema,
  envFlag,
  envMs,
  envPort,
  gatewayFileEnvSchema,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  readGatewayConfig,
  readTextFile,
  runStreamsEnvSchema,
  storeCallerEnvSchema,
  type CommonConfig,
  type Env,
  type MetricsConfig,
  type ModelConfig,
  type ReadTextFile,
  type WebConfig,
  webConfigSchema,
} from "@byok/platform";
import type { SessionTimeouts } from "./session/deps.ts";

/** The repository's prompt assets (the run session reads prompt/cursor/...). */
const REPO_PROMPT_DIR = fileURLToPath(new URL("../../../prompt", import.meta.url));

export const envSchema = commonEnvSchema.extend({
  ...gatewayFileEnvSchema.shape,
  ...storeCallerEnvSchema.shape,
  ...runStreamsEnvSchema.shape,
  ...metricsEnvSchema.shape,
  /** Address the HTTP listener binds to. */
  HOST: z.string().min(1).default("127.0.0.1"),
  /** Port of the HTTP listener (0 = any free port). */
  PORT: envPort(8787),
  /** A heartbeat frame goes out on RunSSE after this long (ms) without any frame. */
  HEARTBEAT_MS: envMs(5_000),
  /** Bound (ms) on waiting for a run's first append (RunSSE first) and for its RunSSE (append first). */
  RUN_WAIT_MS: envMs(60_000),
  /** How long (ms) an ended request id is remembered (late appends are acknowledged and dropped). */
  END_GRACE_MS: envMs(60_000),
  /** How long (ms) a JetStream publish (prepared run, tool result, cancel, client closed) is sent again while NATS does not acknowledge it. */
  RUN_PUBLISH_DEADLINE_MS: envMs(10_000),
  /** How long (ms) a KV set_blob_args may wait for the client's set_blob_result. */
  BLOB_ACK_TIMEOUT_MS: envMs(30_000),
  /** How long (ms) a KV get_blob_args may wait for the client's get_blob_result. */
  KV_GET_TIMEOUT_MS: envMs(30_000),
  /** A running run silent for this long (ms; no state or client event) has its status read from the store. */
  RUN_STATUS_CHECK_MS: envMs(30_000),
  /** How long (ms) a member's model list (the models its team allows) is cached. */
  MODEL_LIST_TTL_MS: envMs(10_000),
  /** Root of the prompt assets (default: the repository's prompt/). */
  PROMPT_DIR: z.string().min(1).default(REPO_PROMPT_DIR),
  /** Read long client histories (64 roots or more) in the CPU worker pool, off the event loop (0 = on the event loop). */
  HISTORY_IN_POOL: envFlag(true),
});

export interface CursorAdapterConfig extends CommonConfig {
  readonly host: string;
  readonly port: number;
  /** BYOK models of the gateway configuration file (GATEWAY_CONFIG). */
  readonly models: ModelConfig[];
  /** Gateway-side web tools of the same file (WebFetch egress policy, WebSearch backend). */
  readonly web: WebConfig;
  readonly heartbeatMs: number;
  readonly runWaitMs: number;
  readonly endGraceMs: number;
  readonly promptDir: string;
  /** How long a member's model list is cached. */
  readonly modelListTtlMs: number;
  readonly timeouts: SessionTimeouts;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
  /** JETSTREAM_REPLICAS; undefined = decided from the cluster (packages/platform/src/run-streams.ts). */
  readonly streamReplicas: number | undefined;
  /** HISTORY_IN_POOL: long histories are read in the CPU pool. */
  readonly historyInPool: boolean;
}

export function loadConfig(env: Env, readFile: ReadTextFile = readTextFile): CursorAdapterConfig {
  const e = parseEnv(envSchema, env, "cursor-adapter");
  const gateway = readGatewayConfig(e.GATEWAY_CONFIG, readFile, "cursor-adapter");
  return {
    ...commonConfigOf(e),
    host: e.HOST,
    port: e.PORT,
    models: gateway.models,
    web: gateway.web ?? webConfigSchema.parse({}),
    heartbeatMs: e.HEARTBEAT_MS,
    runWaitMs: e.RUN_WAIT_MS,
    endGraceMs: e.END_GRACE_MS,
    promptDir: e.PROMPT_DIR,
    modelListTtlMs: e.MODEL_LIST_TTL_MS,
    timeouts: {
      storeMs: e.STORE_TIMEOUT_MS,
      publishDeadlineMs: e.RUN_PUBLISH_DEADLINE_MS,
      blobAckMs: e.BLOB_ACK_TIMEOUT_MS,
      kvGetMs: e.KV_GET_TIMEOUT_MS,
      runStatusCheckMs: e.RUN_STATUS_CHECK_MS,
    },
    metrics: metricsConfigFrom(e),
    streamReplicas: e.JETSTREAM_REPLICAS,
    historyInPool: e.HISTORY_IN_POOL,
  };
}
