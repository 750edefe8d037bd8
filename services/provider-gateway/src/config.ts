/**
 * Provider gateway configuration: env (validated with zod) plus the team's
 * gateway configuration file (read through `readFile`, so tests need no file),
 * resolved into routes with their API keys read from the env variables the
 * file names. Only main.ts passes `process.env` in.
 */
import {
  commonConfigOf,
  commonEnvSchema,
  envMs,
  gatewayFileEnvSchema,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  readGatewayConfig,
  readTextFile,
  type CommonConfig,
  type Env,
  type MetricsConfig,
  type ReadTextFile,
} from "@byok/platform";
import { buildRoutes, type RouteTable } from "./routes.ts";

export const providerGatewayEnvSchema = commonEnvSchema.extend({
  ...gatewayFileEnvSchema.shape,
  ...metricsEnvSchema.shape,
  /** Interval (ms) of keepalive frames while a call waits on its endpoint. */
  PROVIDER_KEEPALIVE_MS: envMs(5_000),
  /** Interval (ms) of caller liveness probes while a call runs (a gone caller's call is aborted). */
  PROVIDER_CALLER_PROBE_MS: envMs(5_000),
  /** A Retry-After longer than this (ms) is not waited for (the call fails instead). */
  PROVIDER_MAX_RETRY_AFTER_MS: envMs(60_000),
});

export interface ProviderGatewayConfig extends CommonConfig {
  readonly keepaliveMs: number;
  readonly callerProbeMs: number;
  readonly maxRetryAfterMs: number;
  /** One route per BYOK model of GATEWAY_CONFIG, with its provider's key (from the env variable the file names). */
  readonly routes: RouteTable;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
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
  };
}
