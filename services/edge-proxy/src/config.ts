/**
 * Edge proxy configuration: the environment (validated with zod) and, for the
 * proxy itself, the BYOK model ids of the team's gateway configuration file
 * (read through `readFile`, so tests need no file). Only main.ts passes
 * `process.env` in. (The member commands are the admin CLI's: services/admin.)
 */
import { z } from "zod";
import {
  commonConfigOf,
  commonEnvSchema,
  envMs,
  envPort,
  gatewayFileEnvSchema,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  readGatewayConfig,
  readTextFile,
  storeCallerEnvSchema,
  type CommonConfig,
  type Env,
  type MetricsConfig,
  type ReadTextFile,
} from "@byok/platform";

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

export const edgeProxyEnvSchema = commonEnvSchema.extend({
  ...gatewayFileEnvSchema.shape,
  ...storeCallerEnvSchema.shape,
  ...metricsEnvSchema.shape,
  /** Address the proxy listens on (0.0.0.0: every interface, for members on the LAN). */
  PROXY_HOST: z.string().min(1).default("127.0.0.1"),
  /** Port the proxy listens on (0 = any free port). */
  PROXY_PORT: envPort(8080),
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
  /** How long (ms) a RunSSE / BidiAppend waits for its run's route to be decided. */
  ROUTE_WAIT_MS: envMs(30_000),
  /** How long (ms) a request id / conversation binding is kept after its last use. */
  ROUTE_TTL_MS: envMs(6 * 60 * 60 * 1000),
  /** Timeout (ms) of the upstream half of a model-list / server-config answer. */
  UPSTREAM_UNARY_TIMEOUT_MS: envMs(15_000),
  /** Timeout (ms) for connecting to an upstream or tunnelled host. */
  CONNECT_TIMEOUT_MS: envMs(15_000),
  /** How long (ms) a verified member key is trusted before asking the store again (revocation delay). */
  MEMBER_CACHE_MS: envMs(30_000),
});

/** What the proxy and the member commands read from the environment. */
export interface EdgeProxyConfig extends CommonConfig {
  readonly host: string;
  readonly port: number;
  readonly adapterOrigin: URL;
  /** undefined: forward to the host the client asked for. */
  readonly upstreamOrigin: URL | undefined;
  readonly upstreamCaFile: string | undefined;
  readonly interceptDomains: readonly string[];
  readonly caDir: string;
  readonly routeWaitMs: number;
  readonly routeTtlMs: number;
  readonly upstreamUnaryTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly memberCacheMs: number;
  readonly storeTimeoutMs: number;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
}

/** The proxy's configuration: the environment plus the BYOK model ids of the gateway file. */
export interface EdgeProxyServiceConfig extends EdgeProxyConfig {
  /** Runs on these models are routed to the adapter (from GATEWAY_CONFIG). */
  readonly byokModelIds: readonly string[];
}

/** For the proxy: the environment and the gateway configuration file (GATEWAY_CONFIG). */
export function loadConfig(env: Env, readFile: ReadTextFile = readTextFile): EdgeProxyServiceConfig {
  const e = parseEnv(edgeProxyEnvSchema, env, "edge-proxy");
  return { ...configOf(e), byokModelIds: readGatewayConfig(e.GATEWAY_CONFIG, readFile, "edge-proxy").models.map((m) => m.id) };
}

function configOf(e: z.infer<typeof edgeProxyEnvSchema>): EdgeProxyConfig {
  return {
    ...commonConfigOf(e),
    host: e.PROXY_HOST,
    port: e.PROXY_PORT,
    adapterOrigin: e.ADAPTER_URL,
    upstreamOrigin: e.UPSTREAM_ORIGIN,
    upstreamCaFile: e.UPSTREAM_CA_FILE,
    interceptDomains: e.INTERCEPT_DOMAINS,
    caDir: e.CA_DIR,
    routeWaitMs: e.ROUTE_WAIT_MS,
    routeTtlMs: e.ROUTE_TTL_MS,
    upstreamUnaryTimeoutMs: e.UPSTREAM_UNARY_TIMEOUT_MS,
    connectTimeoutMs: e.CONNECT_TIMEOUT_MS,
    memberCacheMs: e.MEMBER_CACHE_MS,
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
    metrics: metricsConfigFrom(e),
  };
}
