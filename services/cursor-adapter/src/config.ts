/** Configuration of the cursor adapter, from the environment (validated once). */
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { commonEnvSchema, parseEnv, type Env } from "@byok/platform";

/** The repository's prompt assets (the run session reads prompt/cursor/...). */
const REPO_PROMPT_DIR = fileURLToPath(new URL("../../../prompt", import.meta.url));

const wholeNumber = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .default(fallback);

const envSchema = commonEnvSchema.extend({
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: wholeNumber(8787, 0, 65_535),
  /** The team's gateway configuration file; the adapter reads its model list only. */
  GATEWAY_CONFIG: z.string().min(1).default("config/gateway.json"),
  /** A heartbeat frame goes out on RunSSE after this long without any frame. */
  HEARTBEAT_MS: wholeNumber(5_000, 1),
  /** Bound on waiting for a run's first append (RunSSE first) and for its RunSSE (append first). */
  RUN_WAIT_MS: wholeNumber(60_000, 1),
  /** How long an ended request id is remembered (late appends are acknowledged and dropped). */
  END_GRACE_MS: wholeNumber(60_000, 1),
  STORE_TIMEOUT_MS: wholeNumber(10_000, 1),
  /** How long a member's model list (the models its team allows) is cached. */
  MODEL_LIST_TTL_MS: wholeNumber(10_000, 1),
  BLOB_ACK_TIMEOUT_MS: wholeNumber(30_000, 1),
  KV_GET_TIMEOUT_MS: wholeNumber(30_000, 1),
  /** A running run silent for this long (no state or client event) has its status read from the store. */
  RUN_STATUS_CHECK_MS: wholeNumber(30_000, 1),
  /** Root of the prompt assets (default: the repository's prompt/). */
  PROMPT_DIR: z.string().min(1).default(REPO_PROMPT_DIR),
});

export interface CursorAdapterConfig {
  host: string;
  port: number;
  gatewayConfigPath: string;
  natsUrl: string;
  busPrefix: string;
  logLevel: string;
  logDebugContent: boolean;
  heartbeatMs: number;
  runWaitMs: number;
  endGraceMs: number;
  promptDir: string;
  modelListTtlMs: number;
  timeouts: { storeMs: number; blobAckMs: number; kvGetMs: number; runStatusCheckMs: number };
}

export function loadConfig(env: Env): CursorAdapterConfig {
  const e = parseEnv(envSchema, env, "cursor-adapter");
  return {
    host: e.HOST,
    port: e.PORT,
    gatewayConfigPath: e.GATEWAY_CONFIG,
    natsUrl: e.NATS_URL,
    busPrefix: e.BUS_PREFIX,
    logLevel: e.LOG_LEVEL,
    logDebugContent: e.LOG_DEBUG_CONTENT,
    heartbeatMs: e.HEARTBEAT_MS,
    runWaitMs: e.RUN_WAIT_MS,
    endGraceMs: e.END_GRACE_MS,
    promptDir: e.PROMPT_DIR,
    modelListTtlMs: e.MODEL_LIST_TTL_MS,
    timeouts: { storeMs: e.STORE_TIMEOUT_MS, blobAckMs: e.BLOB_ACK_TIMEOUT_MS, kvGetMs: e.KV_GET_TIMEOUT_MS, runStatusCheckMs: e.RUN_STATUS_CHECK_MS },
  };
}
