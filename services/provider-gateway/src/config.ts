/**
 * Provider gateway configuration: env (validated with zod) plus the team's
 * gateway configuration file (read through `readFile`, so tests need no file),
 * resolved into routes with their API keys read from the env variables the
 * file names, and the models' prices for the call accounting (the file's
 * `price` per model, overridden by the GATEWAY_PRICES file). Only main.ts
 * passes `process.env` in.
 */
import { z } from "zod";
import {
  ConfigError,
  commonConfigOf,
  commonEnvSchema,
  envInt,
  envMs,
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
import { accountedModels, priceOverridesSchema, type AccountedModels, type PriceOverrides } from "./accounting/price-table.ts";
import { buildRoutes, type RouteTable } from "./routes.ts";

export const providerGatewayEnvSchema = commonEnvSchema.extend({
  ...gatewayFileEnvSchema.shape,
  ...metricsEnvSchema.shape,
  ...storeCallerEnvSchema.shape,
  /** Interval (ms) of keepalive frames while a call waits on its endpoint. */
  PROVIDER_KEEPALIVE_MS: envMs(5_000),
  /** Interval (ms) of caller liveness probes while a call runs (a gone caller's call is aborted). */
  PROVIDER_CALLER_PROBE_MS: envMs(5_000),
  /** A Retry-After longer than this (ms) is not waited for (the call fails instead). */
  PROVIDER_MAX_RETRY_AFTER_MS: envMs(60_000),
  /**
   * The delta window (ms), one for all calls of the process: text/thinking deltas of one block that
   * arrive while it is open travel as one ModelEvent when it ends (the first delta of a block is never
   * delayed; 0 = one ModelEvent per upstream delta).
   */
  PROVIDER_DELTA_COALESCE_MS: envMs(4, 0),
  /** Port of the OpenAI/Anthropic-compatible HTTP front (docs/inbound-api.md): unset or empty = no HTTP front, 0 = any free port. */
  INBOUND_PORT: z.preprocess(
    (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
    z.string().trim().regex(/^[0-9]+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(0).max(65_535)).optional(),
  ),
  /** Address the HTTP front listens on. */
  INBOUND_HOST: z.string().min(1).default("127.0.0.1"),
  /** How long (ms) a verified member key is trusted without asking the store again (a revoked key stops working after at most this). */
  INBOUND_KEY_CACHE_MS: envMs(30_000),
  /** How long (ms) replay state of a translated answer is kept for the conversation's next call. */
  INBOUND_REPLAY_TTL_MS: envMs(7 * 24 * 3_600_000),
  /** Largest request body (bytes) the HTTP front reads. */
  INBOUND_MAX_BODY_BYTES: envInt(32 * 1024 * 1024, { min: 1 }),
  /** "store": budgets, limits and the ledger through the store (docs/control-plane.md); "off": admit every call, record nothing. */
  ACCOUNTING: z.enum(["store", "off"]).default("store"),
  /** How long (ms) a member's policy (team, allowed models, budgets, limits) is used before it is fetched again. */
  ACCOUNTING_POLICY_TTL_MS: envMs(5_000),
  /** Leases of budget and rate-limit slices lapse after this (ms) unless renewed; a crashed replica's come back then. */
  ACCOUNTING_LEASE_TTL_MS: envMs(30_000, 3_000),
  /** A lease unused this long (ms) is returned to the store. */
  ACCOUNTING_LEASE_IDLE_MS: envMs(15_000),
  /** A top-up asks for this many calls' worth of reservation (the store grants at most a quarter of what is left); half of it left triggers the next one. */
  ACCOUNTING_LEASE_CALLS: envInt(32, { min: 1, max: 1_000 }),
  /**
   * How long (ms) a settled call's ledger row waits for others to share its write (one settle_many for all
   * of them; a full batch of 200 goes at once). Fewer, larger writes keep the store, Postgres and NATS off
   * the calls' path; a replica that crashes loses at most this long of rows. 0 = an idle writer writes at once.
   */
  ACCOUNTING_LEDGER_LINGER_MS: envMs(200, 0),
  /** This replica's name on its leases (default: host name, process id and a random suffix). */
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
  /** How long a settled call's ledger row waits for company before its write goes out. */
  readonly ledgerLingerMs: number;
  /** undefined = host name, process id and a random suffix. */
  readonly holder: string | undefined;
}

/** The OpenAI/Anthropic-compatible HTTP front (docs/inbound-api.md). */
export interface InboundConfig {
  readonly host: string;
  readonly port: number;
  readonly keyCacheMs: number;
  readonly replayTtlMs: number;
  readonly maxBodyBytes: number;
}

export interface ProviderGatewayConfig extends CommonConfig {
  readonly keepaliveMs: number;
  readonly callerProbeMs: number;
  readonly maxRetryAfterMs: number;
  /** Window (ms) in which text/thinking deltas of one block are joined into one ModelEvent; 0 = off. */
  readonly deltaCoalesceMs: number;
  /** One route per BYOK model of GATEWAY_CONFIG, with its provider's key (from the env variable the file names). */
  readonly routes: RouteTable;
  /** Ops listener (/metrics, /healthz), apart from any client-facing port; METRICS_PORT unset = none. */
  readonly metrics: MetricsConfig;
  /** INBOUND_PORT unset = off. */
  readonly inbound: InboundConfig | undefined;
  /** Bound on one store request (accounting, member.verify of the HTTP front). */
  readonly storeTimeoutMs: number;
  /** Budgets, limits and the ledger; undefined = ACCOUNTING=off. */
  readonly accounting: AccountingConfig | undefined;
}

export function loadConfig(env: Env, readFile: ReadTextFile = readTextFile): ProviderGatewayConfig {
  const e = parseEnv(providerGatewayEnvSchema, env, "provider-gateway");
  const file = readGatewayConfig(e.GATEWAY_CONFIG, readFile, "provider-gateway");
  let accounting: AccountingConfig | undefined;
  if (e.ACCOUNTING === "store") {
    let models: AccountedModels;
    try {
      models = accountedModels(file, e.GATEWAY_PRICES === undefined ? undefined : readPriceOverrides(e.GATEWAY_PRICES, readFile));
    } catch (cause) {
      throw new ConfigError(`provider-gateway: ${(cause as Error).message}`, { cause });
    }
    accounting = {
      models,
      policyTtlMs: e.ACCOUNTING_POLICY_TTL_MS,
      leaseTtlMs: e.ACCOUNTING_LEASE_TTL_MS,
      leaseIdleMs: e.ACCOUNTING_LEASE_IDLE_MS,
      leaseCalls: e.ACCOUNTING_LEASE_CALLS,
      ledgerLingerMs: e.ACCOUNTING_LEDGER_LINGER_MS,
      holder: e.ACCOUNTING_HOLDER,
    };
  }
  return {
    ...commonConfigOf(e),
    keepaliveMs: e.PROVIDER_KEEPALIVE_MS,
    callerProbeMs: e.PROVIDER_CALLER_PROBE_MS,
    maxRetryAfterMs: e.PROVIDER_MAX_RETRY_AFTER_MS,
    deltaCoalesceMs: e.PROVIDER_DELTA_COALESCE_MS,
    routes: buildRoutes(file, env),
    metrics: metricsConfigFrom(e),
    inbound:
      e.INBOUND_PORT === undefined
        ? undefined
        : { host: e.INBOUND_HOST, port: e.INBOUND_PORT, keyCacheMs: e.INBOUND_KEY_CACHE_MS, replayTtlMs: e.INBOUND_REPLAY_TTL_MS, maxBodyBytes: e.INBOUND_MAX_BODY_BYTES },
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
    accounting,
  };
}

function readPriceOverrides(path: string, readFile: ReadTextFile): PriceOverrides {
  let json: unknown;
  try {
    json = JSON.parse(readFile(path));
  } catch (cause) {
    throw new Error(`cannot read the price file ${path}: ${(cause as Error).message}`, { cause });
  }
  const parsed = priceOverridesSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${path}: invalid price file\n${parsed.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`).join("\n")}`);
  return parsed.data;
}
