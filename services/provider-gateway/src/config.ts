/**
 * Provider gateway configuration: env (validated with zod) plus the team's
 * gateway configuration file (read through `readFile`, so tests need no file),
 * resolved into routes with their API keys read from the env variables the
 * file names. Only main.ts passes `process.env` in.
 */
import { z } from "zod";
import {
  commonConfigOf,
  commonEnvSchema,
  envInt,
  envMs,
  gatewayFileEnvSchema,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  readGatewayConfig,
  readTextFile,
  storeCallerEnvSchema,
  type CommonConfig,
  type Env,
  type MetricsConfig,
  type ReadTextFile,
} from "@byok/platform";
import { buildRoutes, type RouteTable } from "./routes.ts";

export const providerGatewayEnvSchema = commonEnvSchema.extend({
  ...gatewayFileEnvSchema.shape,
  ...metricsEnvSchema.shape,
  ...storeCallerEnvSchema.shape,
  /** Interval (ms) of keepalive frames while a call waits on its endpoint. */
  PROVIDER_KEEPALIVE_MS: envMs(5_000),
  /** Interval (ms) of caller liveness probes while a call runs (a gone caller's call is aborted). */
  PROVIDER_CALLER_PROBE_MS: envMs(5_000),
  /** A Retry-After longer than this (ms) is not waited for (the call fails instead). */
  PROVIDER_MAX_RETRY_AFTER_MS: envMs(60_000),
  /** Port of the OpenAI/Anthropic-compatible HTTP front (docs/inbound-api.md): unset or empty = no HTTP front, 0 = any free port. */
  INBOUND_PORT: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z.string().trim().regex(/^[0-9]+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(0).max(65_535)).optional(),
  ),
  /** Address the HTTP front listens on. */
  INBOUND_HOST: z.string().min(1).default("127.0.0.1"),
  /** How long (ms) a verified member key is trusted without asking the store again (a revoked key stops working after at most this). */
  INBOUND_KEY_CACHE_MS: envMs(30_000),
  /** How long (ms) replay state of a translated answer is kept for the conversation's next call. */
  INBOUND_REPLAY_TTL_MS: envMs(7 * 24 * 3_600_000),
  /** Largest request body (bytes) the HTTP front reads. */
  INBOUND_MAX_BODY_BYTES: envInt(32 * 1024 * 1024, { min: 1 }),
});

/** The OpenAI/Anthropic-compatible HTTP front (docs/inbound-api.md). */
export interface InboundConfig {
  readonly host: string;
  readonly port: number;
  readonly keyCacheMs: number;
  readonly replayTtlMs: number;
  readonly maxBodyBytes: number;
}

export interface ProviderGatewayConfig extends CommonConfig {
  readonly keepaliveMs: number;
  readonly callerProbeMs: number;
  readonly maxRetryAfterMs: number;
  /** One route per BYOK model of GATEWAY_CONFIG, with its provider's key (from the env variable the file names). */
  readonly routes: RouteTable;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
  /** INBOUND_PORT unset = off. */
  readonly inbound: InboundConfig | undefined;
  /** Bound on one store request (member.verify of the HTTP front). */
  readonly storeTimeoutMs: number;
}

export function loadConfig(env: Env, readFile: ReadTextFile = readTextFile): ProviderGatewayConfig {
  const e = parseEnv(providerGatewayEnvSchema, env, "provider-gateway");
  const file = readGatewayConfig(e.GATEWAY_CONFIG, readFile, "provider-gateway");
  return {
    ...commonConfigOf(e),
    keepaliveMs: e.PROVIDER_KEEPALIVE_MS,
    callerProbeMs: e.PROVIDER_CALLER_PROBE_MS,
    maxRetryAfterMs: e.PROVIDER_MAX_RETRY_AFTER_MS,
    routes: buildRoutes(file, env),
    metrics: metricsConfigFrom(e),
    inbound:
      e.INBOUND_PORT === undefined
        ? undefined
        : { host: e.INBOUND_HOST, port: e.INBOUND_PORT, keyCacheMs: e.INBOUND_KEY_CACHE_MS, replayTtlMs: e.INBOUND_REPLAY_TTL_MS, maxBodyBytes: e.INBOUND_MAX_BODY_BYTES },
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
  };
}
