/** Store configuration from the environment (validated; only main.ts passes process.env). */
import { z } from "zod";
import { commonConfigOf, commonEnvSchema, envInt, metricsConfigFrom, metricsEnvSchema, parseEnv, type CommonConfig, type Env, type MetricsConfig } from "@byok/platform";

export const storeEnvSchema = commonEnvSchema.extend({
  ...metricsEnvSchema.shape,
  /** The gateway's Postgres (the store is the only process that gets it). */
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (postgres://user@host:port/database)"),
  /** Connections in the store's Postgres pool. */
  DATABASE_POOL_SIZE: envInt(10, { min: 1, max: 100 }),
});

export interface StoreConfig extends CommonConfig {
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
}

export function loadConfig(env: Env): StoreConfig {
  const parsed = parseEnv(storeEnvSchema, env, "store");
  return {
    ...commonConfigOf(parsed),
    databaseUrl: parsed.DATABASE_URL,
    databasePoolSize: parsed.DATABASE_POOL_SIZE,
    metrics: metricsConfigFrom(parsed),
  };
}
