/**
 * Shared pieces of each service's `loadConfig(env)`: common env keys validated
 * with zod. Only `main.ts` files pass `process.env` in.
 */
import { z } from "zod";

export type Env = Readonly<Record<string, string | undefined>>;

export const commonEnvSchema = z.object({
  NATS_URL: z.string().min(1).default("nats://127.0.0.1:4222"),
  BUS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default("byok"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  LOG_DEBUG_CONTENT: z.enum(["0", "1", "true", "false"]).default("0").transform((v) => v === "1" || v === "true"),
});

export type CommonConfig = z.infer<typeof commonEnvSchema>;

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
