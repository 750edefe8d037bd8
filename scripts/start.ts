/**
 * `npm start`: the whole gateway on one machine, each service a separate child
 * process (`node services/<svc>/src/main.ts`), one log stream prefixed with the
 * service names, and a clean Ctrl-C (services stop first, then the embedded
 * NATS/Postgres; a second Ctrl-C kills everything).
 *
 * Environment:
 *   GATEWAY_CONFIG   gateway config file (default config/gateway.json; see config/gateway.example.json)
 *   DATABASE_URL     Postgres to use; unset = embedded Postgres in .data/postgres (port EMBEDDED_PG_PORT, default 54329)
 *   NATS_URL         NATS with JetStream; unset = nats-server from PATH, store in .data/nats (port EMBEDDED_NATS_PORT, default 42229)
 *   .env             loaded first if present (provider keys, e.g. OPENAI_API_KEY); existing variables win
 *   LOG_FORMAT       "pretty" (default on a terminal) or "json"
 * Everything else (PORT, PROXY_PORT, LOG_LEVEL, METRICS_HOST, ...) passes through to the services.
 *   METRICS_PORT_BASE  ops listeners (/metrics, /healthz): service i of METRICS_SERVICES gets port base + i
 *                    (default 9461: edge-proxy 9461 ... store 9465); 0 = a free port each
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { loadGatewayConfigFile, type GatewayConfig } from "@byok/platform";
import { ChildStartError, describeExit, SupervisedChild } from "./start/child-process.ts";
import { InfrastructureError, startInfrastructure, type Infrastructure } from "./start/infrastructure.ts";
import { createLinePrinter, logMessage } from "./start/log-lines.ts";

const ROOT = resolve(import.meta.dirname, "..");
const STOP_GRACE_MS = 15_000;

/** Start order: store first (migrations), edge proxy last (it forwards to the adapter). */
const SERVICE_WAVES: readonly (readonly string[])[] = [["store"], ["provider-gateway", "run-worker", "cursor-adapter"], ["edge-proxy"]];
const SERVICES = SERVICE_WAVES.flat();
/** Ops listener ports: METRICS_PORT_BASE + the service's index here (on METRICS_HOST, default 127.0.0.1). */
const METRICS_SERVICES: readonly string[] = ["edge-proxy", "cursor-adapter", "run-worker", "provider-gateway", "store"];

function fail(message: string): never {
  console.error(`npm start: ${message}`);
  process.exit(1);
}

function loadConfig(env: NodeJS.ProcessEnv): { path: string; config: GatewayConfig } {
  const path = resolve(ROOT, env["GATEWAY_CONFIG"] ?? "config/gateway.json");
  if (!existsSync(path)) {
    fail(
      `no gateway configuration at ${path}.\n` +
        `  Copy the example and edit it: cp config/gateway.example.json config/gateway.json\n` +
        `  (or point GATEWAY_CONFIG at your file). The example lists one BYOK model and explains each field in README.md.`,
    );
  }
  try {
    return { path, config: loadGatewayConfigFile(path) };
  } catch (err) {
    fail((err as Error).message);
  }
}

/** Keys go only to the provider gateway; DATABASE_URL only to the store; the edge proxy learns the adapter's address. */
function serviceEnv(
  service: string,
  base: NodeJS.ProcessEnv,
  infra: Infrastructure,
  configPath: string,
  keyVariables: readonly string[],
  adapterUrl: string | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, NATS_URL: infra.natsUrl, GATEWAY_CONFIG: configPath };
  delete env["DATABASE_URL"];
  if (service !== "provider-gateway") for (const key of keyVariables) delete env[key];
  if (service === "store") env["DATABASE_URL"] = infra.databaseUrl;
  if (service === "edge-proxy" && adapterUrl !== undefined) env["ADAPTER_URL"] = adapterUrl;
  // The OpenAI/Anthropic-compatible API (docs/inbound-api.md) is on by default locally.
  if (service === "provider-gateway") env["INBOUND_PORT"] ??= "8090";
  const metricsBase = Number(base["METRICS_PORT_BASE"] || 9461);
  env["METRICS_PORT"] = String(metricsBase === 0 ? 0 : metricsBase + METRICS_SERVICES.indexOf(service));
  return env;
}

/** http://host:port from the adapter's "cursor adapter listening" log fields (a wildcard host means this machine). */
function adapterUrlFrom(fields: Record<string, unknown>): string | undefined {
  const port = Number(fields["port"]);
  if (!Number.isInteger(port) || port <= 0) return undefined;
  const host = typeof fields["host"] === "string" && !["0.0.0.0", "::", ""].includes(fields["host"]) ? fields["host"] : "127.0.0.1";
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

async function main(): Promise<void> {
  process.chdir(ROOT);
  if (existsSync(resolve(ROOT, ".env"))) process.loadEnvFile(resolve(ROOT, ".env"));
  const env = { ...process.env };
  const { path: configPath, config } = loadConfig(env);
  const keyVariables = [...new Set(Object.values(config.providers).map((p) => p.apiKeyEnv))];
  const missingKeys = keyVariables.filter((k) => (env[k] ?? "") === "");
  if (missingKeys.length > 0) console.warn(`npm start: warning: ${missingKeys.join(", ")} not set (put provider keys in .env); the provider gateway will refuse to start.`);

  const pretty = env["LOG_FORMAT"] !== undefined ? env["LOG_FORMAT"] === "pretty" : process.stdout.isTTY === true;
  const print = createLinePrinter({ pretty, names: ["postgres", "nats", ...SERVICES] });

  const running: SupervisedChild[] = [];
  let infrastructure: SupervisedChild[] = [];
  let stopping = false;

  const shutdown = async (exitCode: number): Promise<never> => {
    if (stopping) process.exit(exitCode);
    stopping = true;
    // Services in reverse start order, then the embedded infrastructure.
    for (const wave of [...SERVICE_WAVES].reverse()) {
      await Promise.all(running.filter((c) => wave.includes(c.name)).map((c) => c.stop(STOP_GRACE_MS)));
    }
    await Promise.all(infrastructure.map((c) => c.stop(STOP_GRACE_MS)));
    process.exit(exitCode);
  };
  // A terminal Ctrl-C reaches both npm and this process, and npm forwards it too: signals arriving
  // within a second of the first count as one. A later one means "kill now".
  let firstSignalAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    const now = Date.now();
    if (firstSignalAt !== undefined && now - firstSignalAt < 1_000) return;
    if (firstSignalAt !== undefined) {
      console.error(`npm start: ${signal} again: killing everything`);
      for (const c of [...running, ...infrastructure]) c.kill();
      process.exit(130);
    }
    firstSignalAt = now;
    console.error(`npm start: ${signal}: stopping (press Ctrl-C again to kill)`);
    void shutdown(0);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  let infra: Infrastructure;
  try {
    infra = await startInfrastructure(
      {
        databaseUrl: env["DATABASE_URL"] || undefined,
        natsUrl: env["NATS_URL"] || undefined,
        dataDir: resolve(ROOT, ".data"),
        postgresPort: Number(env["EMBEDDED_PG_PORT"] ?? 54329),
        natsPort: Number(env["EMBEDDED_NATS_PORT"] ?? 42229),
        postgresPassword: env["EMBEDDED_PG_PASSWORD"] ?? "byok-local",
      },
      print,
      env,
    );
  } catch (err) {
    if (err instanceof InfrastructureError || err instanceof ChildStartError) fail(err.message);
    throw err;
  }
  infrastructure = infra.children;
  if (stopping) return;
  // Where the adapter really listens (PORT may be 0): the edge proxy, started after it, forwards there.
  let adapterUrl: string | undefined = env["ADAPTER_URL"];

  for (const wave of SERVICE_WAVES) {
    const started = wave.map((service) => {
      const child = new SupervisedChild(
        {
          name: service,
          command: process.execPath,
          args: [resolve(ROOT, "services", service, "src", "main.ts")],
          env: serviceEnv(service, env, infra, configPath, keyVariables, adapterUrl),
          readyWhen: (line) => {
            const log = logMessage(line);
            if (service === "cursor-adapter" && log?.msg === "cursor adapter listening") adapterUrl = adapterUrlFrom(log.fields);
            return log?.msg === `${service} started`;
          },
        },
        print,
      );
      running.push(child);
      void child.exited.then((exit) => {
        if (stopping) return;
        console.error(`npm start: ${service} stopped unexpectedly (${describeExit(exit)}); stopping the gateway`);
        void shutdown(1);
      });
      return child;
    });
    try {
      await Promise.all(started.map((c) => c.ready(60_000)));
    } catch (err) {
      if (stopping) return;
      console.error(`npm start: ${(err as Error).message}`);
      await shutdown(1);
    }
  }
  console.error(`npm start: gateway running (services: ${SERVICES.join(", ")}). Ctrl-C stops it.`);
}

await main();
