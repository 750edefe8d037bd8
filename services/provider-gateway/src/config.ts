/**
 * Provider gateway configuration: env (validated with zod) plus the team's
 * gateway configuration file, resolved into routes with their API keys read
 * from the env variables the file names. Only main.ts passes `process.env`.
 */
import { z } from "zod";
import { commonEnvSchema, ConfigError, loadGatewayConfigFile, parseEnv, type Env, type GatewayConfig } from "@byok/platform";
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
  /** Port of the OpenAI/Anthropic-compatible HTTP front; unset = no HTTP front, 0 = any free port (tests). */
  INBOUND_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  INBOUND_HOST: z.string().min(1).default("127.0.0.1"),
  /** How long a verified member key is trusted without asking the store again (a revoked key stops working after at most this). */
  INBOUND_KEY_CACHE_MS: msSchema(30_000),
  /** How long replay state of a translated answer is kept for the conversation's next call. */
  INBOUND_REPLAY_TTL_MS: msSchema(7 * 24 * 3_600_000),
  /** Largest request body the HTTP front reads. */
  INBOUND_MAX_BODY_BYTES: z.coerce.number().int().positive().default(32 * 1024 * 1024),
  /** Timeout of store requests (member.verify). */
  STORE_TIMEOUT_MS: msSchema(10_000),
});

export interface InboundConfig {
  readonly host: string;
  readonly port: number;
  readonly keyCacheMs: number;
  readonly replayTtlMs: number;
  readonly maxBodyBytes: number;
}

export interface ProviderGatewayConfig {
  natsUrl: string;
  busPrefix: string;
  logLevel: string;
  debugContent: boolean;
  keepaliveMs: number;
  callerProbeMs: number;
  maxRetryAfterMs: number;
  routes: RouteTable;
  /** The OpenAI/Anthropic-compatible HTTP front; undefined = off. */
  inbound: InboundConfig | undefined;
  storeTimeoutMs: number;
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
    inbound:
      e.INBOUND_PORT === undefined
        ? undefined
        : { host: e.INBOUND_HOST, port: e.INBOUND_PORT, keyCacheMs: e.INBOUND_KEY_CACHE_MS, replayTtlMs: e.INBOUND_REPLAY_TTL_MS, maxBodyBytes: e.INBOUND_MAX_BODY_BYTES },
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
  };
}

function readGatewayConfig(path: string): GatewayConfig {
  try {
    return loadGatewayConfigFile(path);
  } catch (cause) {
    throw new ConfigError(`provider-gateway: ${(cause as Error).message}`, { cause });
  }
}
