/**
 * Provider gateway configuration: env (validated with zod) plus the team's
 * gateway configuration file, resolved into routes with their API keys read
 * from the env variables the file names. Only main.ts passes `process.env`.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { commonEnvSchema, ConfigError, loadGatewayConfigFile, parseEnv, type Env, type GatewayConfig } from "@byok/platform";
import { accountedModels, priceOverridesSchema, type AccountedModels, type PriceOverrides } from "./accounting/price-table.ts";
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
  /** Timeout of store requests (accounting). */
  STORE_TIMEOUT_MS: msSchema(10_000),
  /** "store": budgets, limits and the ledger through the store (docs/control-plane.md); "off": admit every call, record nothing. */
  ACCOUNTING: z.enum(["store", "off"]).default("store"),
  /** How long a member's policy (team, allowed models, budgets, limits) is used before it is fetched again. */
  ACCOUNTING_POLICY_TTL_MS: msSchema(5_000),
  /** Leases of budget and rate-limit slices lapse after this unless renewed (a crashed replica's come back then). */
  ACCOUNTING_LEASE_TTL_MS: msSchema(30_000),
  /** A lease unused this long is returned to the store. */
  ACCOUNTING_LEASE_IDLE_MS: msSchema(15_000),
  /** A top-up asks for this many calls' worth of reservation (the store grants at most a quarter of what is left). */
  ACCOUNTING_LEASE_CALLS: z.coerce.number().int().min(1).max(1_000).default(8),
  /** This replica's name on its leases (default: host name and process id). */
  ACCOUNTING_HOLDER: z.string().min(1).optional(),
  /** Optional JSON file of price overrides: {"models": {"<model id>": {"input": 2.5, "output": 10}}}. */
  GATEWAY_PRICES: z.string().min(1).optional(),
});

export interface AccountingConfig {
  /** The configured models with their (overridden) prices. */
  readonly models: AccountedModels;
  readonly policyTtlMs: number;
  readonly leaseTtlMs: number;
  readonly leaseIdleMs: number;
  readonly leaseCalls: number;
  /** undefined = host name and process id. */
  readonly holder: string | undefined;
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
  storeTimeoutMs: number;
  /** undefined = ACCOUNTING=off. */
  accounting: AccountingConfig | undefined;
}

/**
 * `gatewayConfig` replaces reading GATEWAY_CONFIG (tests pass the parsed
 * configuration directly). Keys come from `env` either way.
 */
export function loadConfig(env: Env, gatewayConfig?: GatewayConfig): ProviderGatewayConfig {
  const e = parseEnv(providerGatewayEnvSchema, env, "provider-gateway");
  const file = gatewayConfig ?? readGatewayConfig(e.GATEWAY_CONFIG);
  let accounting: AccountingConfig | undefined;
  if (e.ACCOUNTING === "store") {
    let models: AccountedModels;
    try {
      models = accountedModels(file, e.GATEWAY_PRICES === undefined ? undefined : readPriceOverrides(e.GATEWAY_PRICES));
    } catch (cause) {
      throw new ConfigError(`provider-gateway: ${(cause as Error).message}`, { cause });
    }
    accounting = {
      models,
      policyTtlMs: e.ACCOUNTING_POLICY_TTL_MS,
      leaseTtlMs: e.ACCOUNTING_LEASE_TTL_MS,
      leaseIdleMs: e.ACCOUNTING_LEASE_IDLE_MS,
      leaseCalls: e.ACCOUNTING_LEASE_CALLS,
      holder: e.ACCOUNTING_HOLDER,
    };
  }
  return {
    natsUrl: e.NATS_URL,
    busPrefix: e.BUS_PREFIX,
    logLevel: e.LOG_LEVEL,
    debugContent: e.LOG_DEBUG_CONTENT,
    keepaliveMs: e.PROVIDER_KEEPALIVE_MS,
    callerProbeMs: e.PROVIDER_CALLER_PROBE_MS,
    maxRetryAfterMs: e.PROVIDER_MAX_RETRY_AFTER_MS,
    routes: buildRoutes(file, env),
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
    accounting,
  };
}

function readPriceOverrides(path: string): PriceOverrides {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new Error(`cannot read the price file ${path}: ${(cause as Error).message}`, { cause });
  }
  const parsed = priceOverridesSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${path}: invalid price file\n${parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`).join("\n")}`);
  return parsed.data;
}

function readGatewayConfig(path: string): GatewayConfig {
  try {
    return loadGatewayConfigFile(path);
  } catch (cause) {
    throw new ConfigError(`provider-gateway: ${(cause as Error).message}`, { cause });
  }
}
