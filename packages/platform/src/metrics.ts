/**
 * Metrics of one service instance (prom-client). Each service creates one
 * Registry (never prom-client's global one: tests run several services, and
 * several run workers, in one process), names its own series on it in its
 * `metrics.ts`, and serves it on the ops listener (ops-server.ts).
 *
 * Every sample carries the label `service`. The default Node process metrics
 * (`process_*`, `nodejs_*`, standard names) are added only when the ops
 * listener is on: prom-client cannot remove their GC observer again, so
 * embedded/test instances without a listener do not start one.
 *
 * Configuration (each service's loadConfig extends its schema with
 * `metricsEnvSchema`):
 *   METRICS_HOST  address of the ops listener (default 127.0.0.1)
 *   METRICS_PORT  its port; unset or empty = no listener, 0 = any free port
 */
import { collectDefaultMetrics, Registry } from "prom-client";
import { z } from "zod";

export { Counter, Gauge, Histogram, Registry } from "prom-client";

export const metricsEnvSchema = z.object({
  /** Address of the ops listener (/metrics, /healthz). */
  METRICS_HOST: z.string().min(1).default("127.0.0.1"),
  /** Its port: unset or empty = no listener, 0 = any free port (digits only, like every number here). */
  METRICS_PORT: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z.string().trim().regex(/^[0-9]+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(0).max(65_535)).optional(),
  ),
});

export interface MetricsConfig {
  readonly host: string;
  /** undefined: no ops listener. 0: any free port. */
  readonly port: number | undefined;
}

export function metricsConfigFrom(env: z.infer<typeof metricsEnvSchema>): MetricsConfig {
  return { host: env.METRICS_HOST, port: env.METRICS_PORT };
}

/** The service's registry: label `service` on every sample; process metrics when the ops listener is on. */
export function createMetricsRegistry(service: string, config: MetricsConfig): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (config.port !== undefined) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Seconds since `startMs` (a performance.now() reading), for histogram observations. */
export function secondsSince(startMs: number, nowMs: number = performance.now()): number {
  return Math.max(0, nowMs - startMs) / 1000;
}
