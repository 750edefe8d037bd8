/**
 * Configuration of the admin service (the admin page and its HTTP API), from
 * the environment (validated; only main.ts passes process.env in).
 *
 * The admin token is the one credential of the page and the API: it comes
 * from ADMIN_TOKEN (or the file ADMIN_TOKEN_FILE names), never from a member
 * key. `npm start` creates one in DATA_DIR/admin-token when neither is set.
 */
import { z } from "zod";
import {
  commonConfigOf,
  commonEnvSchema,
  ConfigError,
  envFlag,
  envMs,
  envPort,
  metricsConfigFrom,
  metricsEnvSchema,
  parseEnv,
  readTextFile,
  storeCallerEnvSchema,
  type CommonConfig,
  type Env,
  type MetricsConfig,
  type ReadTextFile,
} from "@byok/platform";

const emptyIsUnset = (schema: z.ZodType) => z.preprocess((v) => (v === "" ? undefined : v), schema);

/** Shortest admin token accepted: it is the one secret between the network and every admin action. */
export const MIN_ADMIN_TOKEN_LENGTH = 24;

export const adminServiceEnvSchema = commonEnvSchema.extend({
  ...storeCallerEnvSchema.shape,
  ...metricsEnvSchema.shape,
  /** The admin token (at least 24 characters): the page's login and the API's bearer token. Never a member key. */
  ADMIN_TOKEN: emptyIsUnset(z.string().optional()),
  /** A file holding the admin token (first line), instead of ADMIN_TOKEN (a compose secret, npm start's DATA_DIR/admin-token). */
  ADMIN_TOKEN_FILE: emptyIsUnset(z.string().min(1).optional()),
  /** Address the admin page listens on (0.0.0.0: every interface; put it behind your firewall or a TLS proxy). */
  ADMIN_HOST: z.string().min(1).default("127.0.0.1"),
  /** Port of the admin page and API (0 = any free port). */
  ADMIN_PORT: envPort(8091),
  /** How long (ms) a login on the page lasts. */
  ADMIN_SESSION_MS: envMs(12 * 60 * 60 * 1000, 60_000),
  /** Set the session cookie's Secure flag (when the page is served over HTTPS by a proxy in front). */
  ADMIN_COOKIE_SECURE: envFlag(false),
});

export interface AdminServiceConfig extends CommonConfig {
  readonly adminToken: string;
  readonly host: string;
  readonly port: number;
  readonly sessionMs: number;
  readonly cookieSecure: boolean;
  readonly storeTimeoutMs: number;
  readonly metrics: MetricsConfig;
}

export function loadConfig(env: Env, readFile: ReadTextFile = readTextFile): AdminServiceConfig {
  const parsed = parseEnv(adminServiceEnvSchema, env, "admin");
  const fromEnv = parsed.ADMIN_TOKEN as string | undefined;
  const file = parsed.ADMIN_TOKEN_FILE as string | undefined;
  if (fromEnv !== undefined && file !== undefined) throw new ConfigError("admin: set ADMIN_TOKEN or ADMIN_TOKEN_FILE, not both");
  let token = fromEnv;
  if (file !== undefined) {
    try {
      token = (readFile(file).split(/\r?\n/)[0] ?? "").trim();
    } catch (cause) {
      throw new ConfigError(`admin: cannot read ADMIN_TOKEN_FILE ${file}: ${(cause as Error).message}`, { cause });
    }
  }
  if (token === undefined) throw new ConfigError("admin: ADMIN_TOKEN (or ADMIN_TOKEN_FILE) is required: the admin page and API accept only that token");
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) throw new ConfigError(`admin: the admin token must have at least ${MIN_ADMIN_TOKEN_LENGTH} characters (e.g. openssl rand -base64 32)`);
  return {
    ...commonConfigOf(parsed),
    adminToken: token,
    host: parsed.ADMIN_HOST,
    port: parsed.ADMIN_PORT,
    sessionMs: parsed.ADMIN_SESSION_MS,
    cookieSecure: parsed.ADMIN_COOKIE_SECURE,
    storeTimeoutMs: parsed.STORE_TIMEOUT_MS,
    metrics: metricsConfigFrom(parsed),
  };
}
