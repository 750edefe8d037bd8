/**
 * Provider gateway configuration: env (validated with zod) plus the team's
 * gateway configuration file, resolved into routes with their API keys read
 * from the env variables the file names. Only main.ts passes `process.env`.
 */
import { z } from "zod";
import {
  commonEnvSchema,
  ConfigError,
  loadGatewayConfigFile,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  type Env,
  type GatewayConfig,
  type MetricsConfig,
} from "@byok/platform";
import { buildRoutes, type RouteTable } from "./routes.ts";

const msSchema = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const providerGatewayEnvSchema = commonEnvSchema.extend({
  /** The team's gateway configuration (providers + BYOK models). */
  GATEWAY_CONFIG: z.string().min(1).default("config/gateway.json"),
  /** Interval of keepalive frames while a call waits on its endpoint. */
  PROVIDER_KEEPALIVE_MS: msSchema(5_000),
  /** Interval of caller liveness probes while a call runs (a gone caller's call is aborted). */
  PROVIDER_CALLER_PROBE_MS: msSchema(5_000),
  /** A Retry-After longer than this is not waited for (the call fails instead). */
  PROVIDER_MAX_RETRY_AFTER_MS: msSchema(60_000),
}).extend(metricsEnvSchema.shape);

export interface ProviderGatewayConfig {
  natsUrl: string;
  busPrefix: string;
  logLevel: string;
  debugContent: boolean;
  keepaliveMs: number;
  callerProbeMs: number;
  maxRetryAfterMs: number;
  routes: RouteTable;
  /** Ops listener (/metrics, /healthz); METRICS_PORT unset = none. */
  metrics: MetricsConfig;
}

/**
 * `gatewayConfig` replaces reading GATEWAY_CONFIG (tests pass the parsed
 * configuration directly). Keys come from `env` either way.
 */
export function loadConfig(env: Env, gatewayConfig?: GatewayConfig): ProviderGatewayConfig {
  const e = parseEnv(providerGatewayEnvSchema, env, "provider-gateway");
  const file = gatewayConfig ?? readGatewayConfig(e.GATEWAY_CONFIG);
  return {
    natsUrl: e.NATS_URL,
    busPrefix: e.BUS_PREFIX,
    logLevel: e.LOG_LEVEL,
    debugContent: e.LOG_DEBUG_CONTENT,
    keepaliveMs: e.PROVIDER_KEEPALIVE_MS,
    callerProbeMs: e.PROVIDER_CALLER_PROBE_MS,
    maxRetryAfterMs: e.PROVIDER_MAX_RETRY_AFTER_MS,
    routes: buildRoutes(file, env),
    metrics: metricsConfigFrom(e),
  };
}

function readGatewayConfig(path: string): GatewayConfig {
  try {
    return loadGatewayConfigFile(path);
  } catch (cause) {
    throw new ConfigError(`provider-gateway: ${(cause as Error).message}`, { cause });
  }
}
