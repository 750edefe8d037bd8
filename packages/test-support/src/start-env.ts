/**
 * The environment of `npm start` (scripts/start.ts) for tests and benchmarks
 * that run it as a real process: a given database, bus prefix, gateway config
 * and data directory, the mock LLM's key, every listener on a free loopback
 * port, pass-through traffic sent to a closed local port (nothing reaches the
 * real Cursor), JSON logs. `overrides` win.
 */
import { HARNESS_MOCK_KEY_ENV } from "./gateway-harness.ts";

export interface StartEnvTarget {
  readonly databaseUrl: string;
  readonly natsUrl: string;
  readonly busPrefix: string;
  readonly configPath: string;
  readonly dataDir: string;
}

export function npmStartEnv(target: StartEnvTarget, overrides: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: target.databaseUrl,
    NATS_URL: target.natsUrl,
    BUS_PREFIX: target.busPrefix,
    GATEWAY_CONFIG: target.configPath,
    DATA_DIR: target.dataDir,
    [HARNESS_MOCK_KEY_ENV]: "mock-llm-key-not-a-secret",
    PORT: "0",
    ACP_PORT: "0",
    PROXY_HOST: "127.0.0.1",
    PROXY_PORT: "0",
    INBOUND_PORT: "0",
    ADMIN_PORT: "0",
    UPSTREAM_ORIGIN: "http://127.0.0.1:9",
    LOG_FORMAT: "json",
    LOG_LEVEL: "info",
    METRICS_PORT_BASE: "0",
    ...overrides,
  };
}
