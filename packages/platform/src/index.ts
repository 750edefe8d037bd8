export * from "./logger.ts";
export * from "./config.ts";
export * from "./nats.ts";
export * from "./bus-rpc.ts";
export * from "./lifecycle.ts";
export * from "./gateway-config.ts";
export * from "./run-streams.ts";
export { Counter, Gauge, Histogram, Registry, createMetricsRegistry, metricsConfigFrom, metricsEnvSchema, secondsSince, type MetricsConfig } from "./metrics.ts";
export { startOpsServer, type OpsServer, type OpsServerOptions } from "./ops-server.ts";
