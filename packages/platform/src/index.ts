/**
 * @byok/platform: what every service needs besides the bus contract: logger,
 * configuration parsing, the gateway config file, the NATS connection, typed
 * request/reply, the run streams, the process lifecycle, the metrics
 * registry with its ops listener, binding a listener, and exact USD amounts.
 */
export { BusError, busRequest, serveRequests } from "./bus-rpc.ts";
export { BusPayloads, PayloadFailure, PAYLOAD_REF_HEADER, type OutgoingPayload, type PayloadFailureKind, type ReceivedPayload } from "./bus-payloads.ts";
export type { BusErrorKind, ServeOptions } from "./bus-rpc.ts";
export {
  ConfigError,
  DEFAULT_STORE_TIMEOUT_MS,
  commonConfigOf,
  commonEnvSchema,
  envFlag,
  envInt,
  envMs,
  envPort,
  gatewayFileEnvSchema,
  loadConfigOrExit,
  parseEnv,
  readGatewayConfig,
  readTextFile,
  runStreamsEnvSchema,
  storeCallerEnvSchema,
} from "./config.ts";
export type { CommonConfig, CommonEnv, Env, ReadTextFile } from "./config.ts";
export {
  effortSchema,
  gatewayConfigSchema,
  loadGatewayConfigFile,
  modelPriceSchema,
  modelTokenizer,
  parseGatewayConfig,
  promptCachingOn,
  providerKindSchema,
  reasoningSummarySchema,
  subagentModelSchema,
  tokenizerSchema,
} from "./gateway-config.ts";
export type {
  Effort,
  GatewayConfig,
  ModelConfig,
  ModelPriceConfig,
  ProviderConfig,
  ProviderKind,
  ReasoningSummary,
  SubagentModel,
  Tokenizer,
} from "./gateway-config.ts";
export { webConfigSchema, webFetchConfigSchema, webSearchConfigSchema } from "./web-config.ts";
export type { WebConfig, WebFetchConfig, WebSearchConfig } from "./web-config.ts";
export { runService } from "./lifecycle.ts";
export type { Stoppable } from "./lifecycle.ts";
export { contentForLog, createLogger, silentLogger } from "./logger.ts";
export type { Logger, LoggerOptions } from "./logger.ts";
export { connectNats, natsServers, onReconnect } from "./nats.ts";
export type { NatsConnection } from "./nats.ts";
export { ensureRunStreams, runStreamConfigs } from "./run-streams.ts";
export { autoStreamReplicas } from "./stream-replicas.ts";
export type { RunStreamOptions } from "./run-streams.ts";
export { ToolSetFailure, ToolSets, natsToolSetStore, promptForWire, toolSetDigestHex } from "./tool-sets.ts";
export type { ToolSetFailureKind, ToolSetStore } from "./tool-sets.ts";
export { Counter, Gauge, Histogram, Registry, createMetricsRegistry, metricsConfigFrom, metricsEnvSchema, secondsSince } from "./metrics.ts";
export type { MetricsConfig } from "./metrics.ts";
export { closeOnce, listen, urlHost } from "./listen.ts";
export { startOpsServer } from "./ops-server.ts";
export type { OpsServer, OpsServerOptions } from "./ops-server.ts";
export { PICO_PER_USD, ceilDiv, formatUsd, parsePricePerMillion, parseUsd } from "./usd.ts";
