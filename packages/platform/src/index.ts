/**
 * @byok/platform: what every service needs besides the bus contract: logger,
 * configuration parsing, the gateway config file, the NATS connection, typed
 * request/reply, the run streams, the process lifecycle and exact USD amounts.
 */
export { BusError, busRequest, serveRequests } from "./bus-rpc.ts";
export type { BusErrorKind, ServeOptions } from "./bus-rpc.ts";
export { ConfigError, commonEnvSchema, loadConfigOrExit, parseEnv } from "./config.ts";
export type { CommonConfig, Env } from "./config.ts";
export { effortSchema, gatewayConfigSchema, loadGatewayConfigFile, modelPriceSchema, parseGatewayConfig, providerKindSchema, reasoningSummarySchema } from "./gateway-config.ts";
export type { Effort, GatewayConfig, ModelConfig, ModelPriceConfig, ProviderConfig, ProviderKind, ReasoningSummary } from "./gateway-config.ts";
export { runService } from "./lifecycle.ts";
export type { Stoppable } from "./lifecycle.ts";
export { contentForLog, createLogger, silentLogger } from "./logger.ts";
export type { Logger, LoggerOptions } from "./logger.ts";
export { connectNats } from "./nats.ts";
export type { NatsConnection } from "./nats.ts";
export { ensureRunStreams, runStreamConfigs } from "./run-streams.ts";
export { PICO_PER_USD, ceilDiv, formatUsd, parsePricePerMillion, parseUsd } from "./usd.ts";
