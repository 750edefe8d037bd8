/** Store configuration from the environment (validated; only main.ts passes process.env). */
import { z } from "zod";
import { commonEnvSchema, metricsConfigFrom, metricsEnvSchema, parseEnv, type Env, type MetricsConfig } from "@byok/platform";

const storeEnvSchema = commonEnvSchema.extend({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (postgres://user@host:port/database)"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
}).extend(metricsEnvSchema.shape);

export interface StoreConfig {
  readonly natsUrl: string;
  readonly busPrefix: string;
  readonly logLevel: string;
  readonly logDebugContent: boolean;
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  /** Ops listener (/metrics, /healthz); METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
}

export function loadConfig(env: Env): StoreConfig {
  const parsed = parseEnv(storeEnvSchema, env, "store");
  return {
    natsUrl: parsed.NATS_URL,
    busPrefix: parsed.BUS_PREFIX,
    logLevel: parsed.LOG_LEVEL,
    logDebugContent: parsed.LOG_DEBUG_CONTENT,
    databaseUrl: parsed.DATABASE_URL,
    databasePoolSize: parsed.DATABASE_POOL_SIZE,
    metrics: metricsConfigFrom(parsed),
  };
}
