/** Store configuration from the environment (validated; only main.ts passes process.env). */
import { z } from "zod";
import { commonConfigOf, commonEnvSchema, envInt, envMs, metricsConfigFrom, metricsEnvSchema, parseEnv, type CommonConfig, type Env, type MetricsConfig } from "@byok/platform";

export const storeEnvSchema = commonEnvSchema.extend({
  ...metricsEnvSchema.shape,
  /** The gateway's Postgres (the store is the only process that gets it). */
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (postgres://user@host:port/database)"),
  /** Connections in the store's Postgres pool. */
  DATABASE_POOL_SIZE: envInt(10, { min: 1, max: 100 }),
  /** How often (ms) the retention job deletes conversation content older than each team's retention_days (0 = never on its own). */
  RETENTION_INTERVAL_MS: envMs(60 * 60 * 1000, 0),
});

export interface StoreConfig extends CommonConfig {
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  /** The retention job's interval; 0 = only on request (retention.purge). */
  readonly retentionIntervalMs: number;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
}

export function loadConfig(env: Env): StoreConfig {
  const parsed = parseEnv(storeEnvSchema, env, "store");
  return {
    ...commonConfigOf(parsed),
    databaseUrl: parsed.DATABASE_URL,
    databasePoolSize: parsed.DATABASE_POOL_SIZE,
    retentionIntervalMs: parsed.RETENTION_INTERVAL_MS,
    metrics: metricsConfigFrom(parsed),
  };
}
