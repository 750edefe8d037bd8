/**
 * Configuration of the admin command line (`npm run admin`), from the
 * environment (validated; only the entry point passes process.env in). Unlike
 * the services, NATS_URL has no default: the CLI must not quietly talk to
 * whatever listens on 4222 (see gateway-target.ts for how it finds the
 * gateway).
 */
import { resolve } from "node:path";
import { z } from "zod";
import { parseEnv, type Env } from "@byok/platform";

/** The repository's data directory, where `npm start` keeps local-gateway.json. */
const REPO_DATA_DIR = resolve(import.meta.dirname, "../../../../.data");

const emptyIsUnset = (schema: z.ZodType) => z.preprocess((v) => (v === "" ? undefined : v), schema);

export const adminEnvSchema = z.object({
  /** NATS server of the gateway (compose containers have it). Unset: the running `npm start` gateway, from DATA_DIR. */
  NATS_URL: emptyIsUnset(z.string().min(1).optional()),
  /** Bus prefix of the gateway (default byok, or the one `npm start` recorded). */
  BUS_PREFIX: emptyIsUnset(z.string().regex(/^[A-Za-z0-9_-]+$/).optional()),
  /** Where `npm start` keeps its state and local-gateway.json (default: the repository's .data). */
  DATA_DIR: emptyIsUnset(z.string().min(1).optional()),
  /** Longest wait for one store answer, in ms. */
  STORE_TIMEOUT_MS: z.string().regex(/^[0-9]+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(1)).default(10_000),
});

export interface AdminCliConfig {
  readonly natsUrl: string | undefined;
  readonly busPrefix: string | undefined;
  readonly dataDir: string;
  readonly storeTimeoutMs: number;
}

export function loadConfig(env: Env): AdminCliConfig {
  const e = parseEnv(adminEnvSchema, env, "admin");
  return {
    natsUrl: e.NATS_URL as string | undefined,
    busPrefix: e.BUS_PREFIX as string | undefined,
    dataDir: e.DATA_DIR !== undefined ? resolve(e.DATA_DIR as string) : REPO_DATA_DIR,
    storeTimeoutMs: e.STORE_TIMEOUT_MS,
  };
}
