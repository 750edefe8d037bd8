/**
 * Edge proxy configuration from the environment (validated with zod). Only
 * main.ts passes `process.env` in; everything else receives an EdgeProxyConfig.
 */
import { z } from "zod";
import { commonEnvSchema, metricsConfigFrom, metricsEnvSchema, parseEnv, type Env, type MetricsConfig } from "@byok/platform";

const portSchema = z.coerce.number().int().min(0).max(65_535);
const msSchema = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** A DNS domain: lower-case labels, no wildcard, no trailing dot. */
const domainSchema = z
  .string()
  .transform((d) => d.trim().toLowerCase().replace(/\.$/, ""))
  .pipe(z.string().regex(/^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/, "not a domain name (e.g. cursor.sh)"));

const originSchema = z
  .string()
  .url()
  .transform((u) => new URL(u))
  .refine((u) => (u.protocol === "https:" || u.protocol === "http:") && (u.pathname === "/" || u.pathname === "") && !u.search, {
    message: "must be an http(s) origin without path or query, e.g. https://api2.cursor.sh",
  });

const edgeProxyEnvSchema = commonEnvSchema.extend({
  PROXY_HOST: z.string().min(1).default("127.0.0.1"),
  PROXY_PORT: portSchema.default(8080),
  /** Where the cursor adapter listens (whitelisted agent paths go there). */
  ADAPTER_URL: originSchema.default(new URL("http://127.0.0.1:8787")),
  /**
   * Origin for pass-through traffic. Unset: the Cursor host the client asked for
   * (https://api2.cursor.sh for the agent API). Tests point it at a local stand-in.
   */
  UPSTREAM_ORIGIN: z.preprocess((v) => (v === "" ? undefined : v), originSchema.optional()),
  /** Extra CA (PEM file) trusted for upstream TLS, in addition to the system roots. */
  UPSTREAM_CA_FILE: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional()),
  /** Comma-separated domains whose hosts (the domain and every subdomain) are TLS-terminated. */
  INTERCEPT_DOMAINS: z
    .string()
    .default("cursor.sh")
    .transform((s) => s.split(",").map((d) => d.trim()).filter((d) => d.length > 0))
    .pipe(z.array(domainSchema).min(1)),
  /** Directory of the team CA (ca.crt, ca.key with mode 0600); created on first start. */
  CA_DIR: z.string().min(1).default(".data/edge-proxy/ca"),
  /** Gateway configuration file; the proxy reads only its BYOK model ids. */
  GATEWAY_CONFIG: z.string().min(1).default("config/gateway.json"),
  /** How long a RunSSE / BidiAppend waits for its run's route to be decided. */
  ROUTE_WAIT_MS: msSchema(30_000),
  /** How long a request id / conversation binding is kept after its last use. */
  ROUTE_TTL_MS: msSchema(6 * 60 * 60 * 1000),
  /** Timeout of the upstream half of a model-list / server-config answer. */
  UPSTREAM_UNARY_TIMEOUT_MS: msSchema(15_000),
  /** Timeout for connecting to an upstream or tunnelled host. */
  CONNECT_TIMEOUT_MS: msSchema(15_000),
  /** How long a verified member key is trusted before asking the store again (revocation delay). */
  MEMBER_CACHE_MS: msSchema(30_000),
  STORE_TIMEOUT_MS: msSchema(5_000),
}).extend(metricsEnvSchema.shape);

export interface EdgeProxyConfig {
  natsUrl: string;
  busPrefix: string;
  logLevel: string;
  debugContent: boolean;
  host: string;
  port: number;
  adapterOrigin: URL;
  /** undefined: forward to the host the client asked for. */
  upstreamOrigin: URL | undefined;
  upstreamCaFile: string | undefined;
  interceptDomains: readonly string[];
  caDir: string;
  gatewayConfigPath: string;
  routeWaitMs: number;
  routeTtlMs: number;
  upstreamUnaryTimeoutMs: number;
  connectTimeoutMs: number;
  memberCacheMs: number;
  storeTimeoutMs: number;
  /** Ops listener (/metrics, /healthz), never on the proxy port; METRICS_PORT unset = none. */
  metrics: MetricsConfig;
}

export function loadConfig(env: Env): EdgeProxyConfig {
  const e = parseEnv(edgeProxyEnvSchema, env, "edge-proxy");
  return {
    natsUrl: e.NATS_URL,
    busPrefix: e.BUS_PREFIX,
    logLevel: e.LOG_LEVEL,
    debugContent: e.LOG_DEBUG_CONTENT,
    host: e.PROXY_HOST,
    port: e.PROXY_PORT,
    adapterOrigin: e.ADAPTER_URL,
    upstreamOrigin: e.UPSTREAM_ORIGIN,
    upstreamCaFile: e.UPSTREAM_CA_FILE,
    interceptDomains: e.INTERCEPT_DOMAINS,
    caDir: e.CA_DIR,
    gatewayConfigPath: e.GATEWAY_CONFIG,
    routeWaitMs: e.ROUTE_WAIT_MS,
    routeTtlMs: e.ROUTE_TTL_MS,
    upstreamUnaryTimeoutMs: e.UPSTREAM_UNARY_TIMEOUT_MS,
    connectTimeoutMs: e.CONNECT_TIMEOUT_MS,
    memberCacheMs: e.MEMBER_CACHE_MS,
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
    metrics: metricsConfigFrom(e),
  };
}
