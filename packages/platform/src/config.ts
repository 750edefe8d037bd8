/**
 * Shared pieces of each service's `loadConfig(env)`: the env keys every
 * service reads, the value parsers (whole numbers, durations in ms, ports),
 * the store timeout every store caller shares, and reading the team's gateway
 * configuration file through an injected reader. Only `main.ts` files pass
 * `process.env` in.
 *
 * Every duration is a whole number of milliseconds in a variable ending in
 * `_MS`. Numbers are digits only (surrounding blanks are ignored): "1e3",
 * "5s" and "" are refused with the variable's name, never read as 0 or NaN.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parseGatewayConfig, type GatewayConfig } from "./gateway-config.ts";

export type Env = Readonly<Record<string, string | undefined>>;

/** Reads a UTF-8 text file (a configuration file); loadConfig takes one so tests need no files. */
export type ReadTextFile = (path: string) => string;

/** The real file system. */
export const readTextFile: ReadTextFile = (path) => readFileSync(path, "utf8");

/** A whole number from an env string, `fallback` when unset, within [min, max]. */
export function envInt(fallback: number, range: { min: number; max?: number }) {
  return z
    .string()
    .trim()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(range.min).max(range.max ?? Number.MAX_SAFE_INTEGER))
    .default(fallback);
}

/** A duration in milliseconds (a whole number, at least `min`, default 1). */
export function envMs(fallback: number, min = 1) {
  return envInt(fallback, { min });
}

/** A TCP port (0 = any free port). */
export function envPort(fallback: number) {
  return envInt(fallback, { min: 0, max: 65_535 });
}

/** "1"/"true" or "0"/"false". */
export function envFlag(fallback: boolean) {
  return z
    .enum(["0", "1", "true", "false"])
    .default(fallback ? "1" : "0")
    .transform((v) => v === "1" || v === "true");
}

export const commonEnvSchema = z.object({
  /** NATS server (with JetStream) every service talks over; several servers of one cluster comma-separated. */
  NATS_URL: z.string().min(1).default("nats://127.0.0.1:4222"),
  /** Prefix of every subject and stream name (tests use a random one each). */
  BUS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default("byok"),
  /** pino log level. */
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  /** The debug-content switch: logs may contain prompt text, tool output and provider error bodies (never keys). */
  LOG_DEBUG_CONTENT: envFlag(false),
});

export type CommonEnv = z.infer<typeof commonEnvSchema>;

/** The fields every service's config has, with the same names everywhere. */
export interface CommonConfig {
  readonly natsUrl: string;
  readonly busPrefix: string;
  readonly logLevel: string;
  /** LOG_DEBUG_CONTENT: what `createLogger({ debugContent })` gets. */
  readonly logDebugContent: boolean;
}

export function commonConfigOf(env: CommonEnv): CommonConfig {
  return { natsUrl: env.NATS_URL, busPrefix: env.BUS_PREFIX, logLevel: env.LOG_LEVEL, logDebugContent: env.LOG_DEBUG_CONTENT };
}

/**
 * Default bound on one store request over NATS, the same for every caller.
 * A store that is not there answers at once (no responders), so this only
 * bounds a store that is there but slow (a busy connection pool, a database
 * failing over); 10 s rides out such a stall instead of failing runs or
 * refusing members during it.
 */
export const DEFAULT_STORE_TIMEOUT_MS = 10_000;

/** Env keys of a service that calls the store. */
export const storeCallerEnvSchema = z.object({
  /** Longest wait for one store answer, in ms. */
  STORE_TIMEOUT_MS: envMs(DEFAULT_STORE_TIMEOUT_MS),
});

/** Env key of a service that creates the run streams (cursor adapter, run worker). */
export const runStreamsEnvSchema = z.object({
  /**
   * Replicas of the run streams and of the bus payload bucket: 1 or 3 (3 needs
   * a JetStream cluster of at least three servers). Unset: 3 when the NATS
   * server this service connects to reports a cluster of three or more, else
   * 1; an existing stream keeps its replicas then.
   */
  JETSTREAM_REPLICAS: z
    .string()
    .trim()
    .regex(/^[13]$/, "must be 1 or 3")
    .transform(Number)
    .optional(),
});

/** Env key naming the team's gateway configuration file (providers and BYOK models). */
export const gatewayFileEnvSchema = z.object({
  /** Path of the gateway configuration file (relative to the working directory). */
  GATEWAY_CONFIG: z.string().min(1).default("config/gateway.json"),
});

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Parse `env` with `schema`, turning zod issues into one readable ConfigError. */
export function parseEnv<S extends z.ZodType>(schema: S, env: Env, service: string): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new ConfigError(`${service}: invalid configuration\n${lines.join("\n")}`);
  }
  return result.data;
}

/** The gateway configuration file at `path`, read with `readFile`; any problem is a ConfigError naming the file. */
export function readGatewayConfig(path: string, readFile: ReadTextFile, service: string): GatewayConfig {
  let text: string;
  try {
    text = readFile(path);
  } catch (cause) {
    throw new ConfigError(`${service}: cannot read gateway configuration ${path}: ${(cause as Error).message}`, { cause });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new ConfigError(`${service}: ${path}: not valid JSON: ${(cause as Error).message}`, { cause });
  }
  try {
    return parseGatewayConfig(json, path);
  } catch (cause) {
    throw new ConfigError(`${service}: ${(cause as Error).message}`, { cause });
  }
}

/**
 * For entry points: the service's configuration, or, when it is invalid, its
 * ConfigError message on stderr and exit code 1 (no stack trace). Other
 * errors are thrown.
 */
export function loadConfigOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
}
