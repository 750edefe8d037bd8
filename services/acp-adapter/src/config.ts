/**
 * Configuration of the ACP adapter: the environment (validated once) and the
 * BYOK model list of the gateway configuration file (the models a session
 * may pick), and the listener's TLS files, all read through `readFile` so
 * tests need no files. Only main.ts passes `process.env` in.
 */
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  ConfigError,
  commonConfigOf,
  commonEnvSchema,
  envInt,
  envFlag,
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
  type ModelConfig,
  type ReadTextFile,
} from "@byok/platform";

/** The repository's prompt assets (the adapter reads prompt/acp/...). */
const REPO_PROMPT_DIR = fileURLToPath(new URL("../../../prompt", import.meta.url));

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

const optionalPath = z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional());

export const envSchema = commonEnvSchema.extend({
  ...gatewayFileEnvSchema.shape,
  ...storeCallerEnvSchema.shape,
  ...metricsEnvSchema.shape,
  /** Address the bridge listener binds to. */
  ACP_HOST: z.string().min(1).default("127.0.0.1"),
  /** Port of the bridge listener (0 = any free port). */
  ACP_PORT: envPort(8790),
  /** PEM certificate (chain) of the listener, issued for the gateway's host name by the team's CA; without it (and the key) plain ws, on a loopback ACP_HOST only. */
  ACP_TLS_CERT_FILE: optionalPath,
  /** PEM private key of ACP_TLS_CERT_FILE. */
  ACP_TLS_KEY_FILE: optionalPath,
  /** TLS ends in front of the adapter (a reverse proxy or load balancer with the team's certificate): plain ws on any ACP_HOST. */
  ACP_TLS_OFFLOADED: envFlag(false),
  /** How long (ms) a dropped bridge link is kept for the bridge to resume it. */
  LINK_RESUME_MS: envMs(120_000),
  /** Ping interval (ms) on a bridge link; two unanswered pings drop the socket. */
  LINK_PING_MS: envMs(15_000),
  /** How long (ms) a member key verification is cached. */
  MEMBER_CACHE_MS: envMs(30_000),
  /** How long (ms) a JetStream publish (prepared run, tool result, cancel, client closed) is sent again while NATS does not acknowledge it. */
  RUN_PUBLISH_DEADLINE_MS: envMs(10_000),
  /** A running run silent for this long (ms; no state or client event) has its status read from the store. */
  RUN_STATUS_CHECK_MS: envMs(30_000),
  /** How long (ms) a cancelled run may take to report its end before the prompt answers `cancelled` anyway. */
  CANCEL_GRACE_MS: envMs(1_500),
  /** How long (ms) a run_command may run before it is killed, when the model gives no timeout_ms. */
  COMMAND_TIMEOUT_MS: envMs(120_000),
  /** The longest timeout_ms (ms) a run_command may ask for. */
  COMMAND_MAX_TIMEOUT_MS: envMs(600_000),
  /** Bytes of command output the editor keeps (terminal/create outputByteLimit) and the model sees. */
  COMMAND_OUTPUT_LIMIT: envInt(64 * 1024, { min: 1024 }),
  /** Characters of a file read the model sees at most. */
  READ_LIMIT_CHARS: envInt(200_000, { min: 1_000 }),
  /** The model a new session starts with (default: the first model of the gateway file). */
  ACP_DEFAULT_MODEL: z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional()),
  /** Root of the prompt assets (default: the repository's prompt/). */
  PROMPT_DIR: z.string().min(1).default(REPO_PROMPT_DIR),
});

export interface TlsFiles {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface AcpTimeouts {
  readonly storeMs: number;
  readonly publishDeadlineMs: number;
  readonly runStatusCheckMs: number;
  readonly cancelGraceMs: number;
  readonly linkResumeMs: number;
  readonly linkPingMs: number;
  readonly memberCacheMs: number;
}

export interface ToolLimits {
  readonly commandTimeoutMs: number;
  readonly commandMaxTimeoutMs: number;
  readonly commandOutputLimit: number;
  readonly readLimitChars: number;
}

export interface AcpAdapterConfig extends CommonConfig {
  readonly host: string;
  readonly port: number;
  /** undefined: plain ws (loopback only). */
  readonly tls: TlsFiles | undefined;
  /** BYOK models of the gateway configuration file (GATEWAY_CONFIG). */
  readonly models: ModelConfig[];
  readonly defaultModelId: string;
  /** Directory of the ACP prompt assets (prompt/acp). */
  readonly promptDir: string;
  readonly timeouts: AcpTimeouts;
  readonly tools: ToolLimits;
  readonly metrics: MetricsConfig;
}

export function loadConfig(env: Env, readFile: ReadTextFile = readTextFile): AcpAdapterConfig {
  const e = parseEnv(envSchema, env, "acp-adapter");
  const models = readGatewayConfig(e.GATEWAY_CONFIG, readFile, "acp-adapter").models;
  if ((e.ACP_TLS_CERT_FILE === undefined) !== (e.ACP_TLS_KEY_FILE === undefined)) {
    throw new ConfigError("acp-adapter: set both ACP_TLS_CERT_FILE and ACP_TLS_KEY_FILE, or neither");
  }
  const tls = e.ACP_TLS_CERT_FILE !== undefined && e.ACP_TLS_KEY_FILE !== undefined ? { certPem: readPem(e.ACP_TLS_CERT_FILE, readFile), keyPem: readPem(e.ACP_TLS_KEY_FILE, readFile) } : undefined;
  if (tls === undefined && !e.ACP_TLS_OFFLOADED && !LOOPBACK_HOSTS.has(e.ACP_HOST)) {
    throw new ConfigError(
      `acp-adapter: ACP_HOST ${e.ACP_HOST} is not a loopback address, so the bridge listener needs TLS: ACP_TLS_CERT_FILE and ACP_TLS_KEY_FILE, or ACP_TLS_OFFLOADED=1 when a TLS proxy in front terminates it`,
    );
  }
  const defaultModelId = e.ACP_DEFAULT_MODEL ?? models[0]?.id;
  if (defaultModelId === undefined || !models.some((m) => m.id === defaultModelId)) {
    throw new ConfigError(`acp-adapter: ACP_DEFAULT_MODEL ${JSON.stringify(defaultModelId)} is not a model of the gateway file`);
  }
  return {
    ...commonConfigOf(e),
    host: e.ACP_HOST,
    port: e.ACP_PORT,
    tls,
    models,
    defaultModelId,
    promptDir: `${e.PROMPT_DIR}/acp`,
    timeouts: {
      storeMs: e.STORE_TIMEOUT_MS,
      publishDeadlineMs: e.RUN_PUBLISH_DEADLINE_MS,
      runStatusCheckMs: e.RUN_STATUS_CHECK_MS,
      cancelGraceMs: e.CANCEL_GRACE_MS,
      linkResumeMs: e.LINK_RESUME_MS,
      linkPingMs: e.LINK_PING_MS,
      memberCacheMs: e.MEMBER_CACHE_MS,
    },
    metrics: metricsConfigFrom(e),
    tools: {
      commandTimeoutMs: e.COMMAND_TIMEOUT_MS,
      commandMaxTimeoutMs: e.COMMAND_MAX_TIMEOUT_MS,
      commandOutputLimit: e.COMMAND_OUTPUT_LIMIT,
      readLimitChars: e.READ_LIMIT_CHARS,
    },
  };
}

function readPem(path: string, readFile: ReadTextFile): string {
  try {
    return readFile(path);
  } catch (cause) {
    throw new ConfigError(`acp-adapter: cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}
