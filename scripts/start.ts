/**
 * `npm start`: the whole gateway on one machine, each service a separate child
 * process (`node services/<svc>/src/main.ts`), one log stream prefixed with the
 * service names, and a clean stop on SIGINT, SIGTERM or SIGHUP: services first
 * (edge proxy first, store last), then the embedded NATS/Postgres; a second
 * signal kills everything.
 *
 * Readiness: each service reports "started" (with its addresses) over the IPC
 * channel (@byok/platform/service-status), so it works at any LOG_LEVEL. The
 * supervisor claims `<DATA_DIR>/local-gateway.json` first (a second start on
 * the same data says "already running"), writes the addresses there once the
 * gateway is up (the admin CLI finds the gateway through it) and removes it
 * when it stops.
 *
 * Environment:
 *   GATEWAY_CONFIG   gateway config file (default config/gateway.json; see config/gateway.example.json)
 *   DATA_DIR         local state: embedded Postgres and NATS data, the team CA, local-gateway.json (default .data)
 *   DATABASE_URL     Postgres to use; unset = embedded Postgres in DATA_DIR/postgres (port EMBEDDED_PG_PORT, default 54329)
 *   NATS_URL         NATS with JetStream; unset = nats-server from PATH, store in DATA_DIR/nats (port EMBEDDED_NATS_PORT, default 42229)
 *   .env             loaded first if present (provider keys, e.g. OPENAI_API_KEY); existing variables win
 *   LOG_FORMAT       "pretty" (default on a terminal) or "json"
 *   METRICS_PORT_BASE  ops listeners (/metrics, /healthz): service i of METRICS_SERVICES gets port base + i
 *                    (default 9461: edge-proxy 9461 ... store 9465, acp-adapter 9466, admin 9467); 0 = a free port each
 *   ADMIN_TOKEN      the admin page's token; unset (and no ADMIN_TOKEN_FILE) = the one in DATA_DIR/admin-token,
 *                    created on the first start (only the admin service gets it)
 * Everything else (PORT, PROXY_HOST, PROXY_PORT, LOG_LEVEL, METRICS_HOST, ...) passes through to the services.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadGatewayConfigFile, type GatewayConfig } from "@byok/platform";
import { claimLocalGateway, releaseLocalGateway, updateLocalGateway, type LocalGatewayInfo } from "@byok/platform/local-gateway";
import { adminTokenSource, type AdminTokenSource } from "./start/admin-token.ts";
import { alreadyRunningMessage, reachableUrl, readyLines } from "./start/announcements.ts";
import { ChildStartError, describeExit, SupervisedChild } from "./start/child-process.ts";
import { InfrastructureError, startInfrastructure, type Infrastructure } from "./start/infrastructure.ts";
import { createLinePrinter } from "./start/log-lines.ts";
import { portInUseMessage, portIsFree, type ListenTarget } from "./start/ports.ts";

const ROOT = resolve(import.meta.dirname, "..");
const STOP_GRACE_MS = 15_000;
const READY_TIMEOUT_MS = 60_000;

/** Start order: store first (migrations), edge proxy last (it forwards to the adapter). */
const SERVICE_WAVES: readonly (readonly string[])[] = [["store"], ["provider-gateway", "run-worker", "cursor-adapter", "acp-adapter", "admin"], ["edge-proxy"]];
const SERVICES = SERVICE_WAVES.flat();
/** Ops listener ports: METRICS_PORT_BASE + the service's index here (on METRICS_HOST, default 127.0.0.1). */
const METRICS_SERVICES: readonly string[] = ["edge-proxy", "cursor-adapter", "run-worker", "provider-gateway", "store", "acp-adapter", "admin"];

/** The variables that set where each listening service listens (named in "port in use" errors). */
const LISTEN_VARIABLES: Readonly<Record<string, { what: string; host: string; port: string }>> = {
  "edge-proxy": { what: "the edge proxy", host: "PROXY_HOST", port: "PROXY_PORT" },
  "cursor-adapter": { what: "the cursor adapter", host: "HOST", port: "PORT" },
  "acp-adapter": { what: "the ACP adapter", host: "ACP_HOST", port: "ACP_PORT" },
  admin: { what: "the admin page", host: "ADMIN_HOST", port: "ADMIN_PORT" },
};

/** Cleanup that `fail` runs before exiting (the claimed addresses file). */
let releaseClaim: () => void = () => undefined;

function fail(message: string): never {
  releaseClaim();
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

/** Keys go only to the provider gateway; DATABASE_URL only to the store; the admin token only to the admin service; the edge proxy learns the adapter's address. */
function serviceEnv(
  service: string,
  base: NodeJS.ProcessEnv,
  infra: Infrastructure,
  configPath: string,
  keyVariables: readonly string[],
  adapterUrl: string | undefined,
  dataDir: string,
  adminToken: AdminTokenSource,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, NATS_URL: infra.natsUrl, GATEWAY_CONFIG: configPath };
  delete env["DATABASE_URL"];
  delete env["ADMIN_TOKEN"];
  delete env["ADMIN_TOKEN_FILE"];
  if (service === "admin") Object.assign(env, adminToken.env);
  if (service !== "provider-gateway") for (const key of keyVariables) delete env[key];
  if (service === "store") env["DATABASE_URL"] = infra.databaseUrl;
  if (service === "edge-proxy") {
    if (adapterUrl !== undefined) env["ADAPTER_URL"] = adapterUrl;
    env["CA_DIR"] ??= join(dataDir, "edge-proxy", "ca");
  }
  // The OpenAI/Anthropic-compatible API (docs/inbound-api.md) is on by default locally.
  if (service === "provider-gateway") env["INBOUND_PORT"] ??= "8090";
  const metricsBase = Number(base["METRICS_PORT_BASE"] || 9461);
  env["METRICS_PORT"] = String(metricsBase === 0 ? 0 : metricsBase + METRICS_SERVICES.indexOf(service));
  return env;
}

/** The one-line reason a service did not start (a port in use names its variable). */
function startFailureMessage(service: string, err: ChildStartError, env: NodeJS.ProcessEnv): string {
  const listen = LISTEN_VARIABLES[service];
  const failure = err.failure;
  if (failure?.code === "EADDRINUSE" && failure.port !== undefined && String(failure.port) === env["METRICS_PORT"]) {
    return portInUseMessage({ what: `the ${service} ops listener`, host: failure.address ?? env["METRICS_HOST"] ?? "127.0.0.1", port: failure.port, variable: "METRICS_PORT_BASE", alternative: "or 0 for free ports" });
  }
  if (listen !== undefined && failure?.code === "EADDRINUSE") {
    const port = failure.port ?? Number(env[listen.port]);
    return portInUseMessage({ what: listen.what, host: failure.address ?? env[listen.host] ?? "127.0.0.1", port, variable: listen.port });
  }
  if (listen !== undefined && failure?.code === "EADDRNOTAVAIL") return `${listen.what} cannot listen on ${failure.address ?? env[listen.host]}: no such address on this machine (check ${listen.host}).`;
  return err.message;
}

/** Ports the embedded servers will take, checked before anything starts. */
async function checkEmbeddedPorts(env: NodeJS.ProcessEnv, natsPort: number, postgresPort: number): Promise<void> {
  const targets: ListenTarget[] = [];
  if (!env["NATS_URL"]) targets.push({ what: "embedded NATS", host: "127.0.0.1", port: natsPort, variable: "EMBEDDED_NATS_PORT", alternative: "or NATS_URL to a NATS server with JetStream" });
  if (!env["DATABASE_URL"]) targets.push({ what: "embedded Postgres", host: "127.0.0.1", port: postgresPort, variable: "EMBEDDED_PG_PORT", alternative: "or DATABASE_URL to a Postgres you run" });
  for (const target of targets) if (!(await portIsFree(target.host, target.port))) fail(portInUseMessage(target));
}

async function main(): Promise<void> {
  process.chdir(ROOT);
  if (existsSync(resolve(ROOT, ".env"))) process.loadEnvFile(resolve(ROOT, ".env"));
  const env = { ...process.env };
  const dataDir = resolve(ROOT, env["DATA_DIR"] || ".data");
  let info: LocalGatewayInfo = { pid: process.pid, state: "starting", startedAt: new Date().toISOString() };
  const claim = claimLocalGateway(dataDir, info);
  if (claim.kind === "taken") fail(alreadyRunningMessage(claim.path, claim.info));
  releaseClaim = () => releaseLocalGateway(dataDir, process.pid);
  const { path: configPath, config } = loadConfig(env);
  const keyVariables = [...new Set(Object.values(config.providers).map((p) => p.apiKeyEnv))];
  const missingKeys = keyVariables.filter((k) => (env[k] ?? "") === "");
  if (missingKeys.length > 0) console.warn(`npm start: warning: ${missingKeys.join(", ")} not set (put provider keys in .env); the provider gateway will refuse to start.`);

  const adminToken = adminTokenSource(env, dataDir);

  const natsPort = Number(env["EMBEDDED_NATS_PORT"] ?? 42229);
  const postgresPort = Number(env["EMBEDDED_PG_PORT"] ?? 54329);
  await checkEmbeddedPorts(env, natsPort, postgresPort);

  const pretty = env["LOG_FORMAT"] !== undefined ? env["LOG_FORMAT"] === "pretty" : process.stdout.isTTY === true;
  const print = createLinePrinter({ pretty, names: ["postgres", "nats", ...SERVICES] });

  const running: SupervisedChild[] = [];
  let infrastructure: SupervisedChild[] = [];
  /** While the embedded servers start: a stop waits for them, then stops them too. */
  let infrastructureStarting: Promise<Infrastructure> | undefined;
  let stopping = false;

  const shutdown = async (exitCode: number): Promise<never> => {
    if (stopping) process.exit(exitCode);
    stopping = true;
    // Services in reverse start order, then the embedded infrastructure.
    for (const wave of [...SERVICE_WAVES].reverse()) {
      await Promise.all(running.filter((c) => wave.includes(c.name)).map((c) => c.stop(STOP_GRACE_MS)));
    }
    if (infrastructureStarting !== undefined) infrastructure = (await infrastructureStarting.catch(() => undefined))?.children ?? infrastructure;
    await Promise.all(infrastructure.map((c) => c.stop(STOP_GRACE_MS)));
    releaseClaim();
    process.exit(exitCode);
  };
  // A terminal Ctrl-C reaches both npm and this process, and npm forwards it too: signals arriving
  // within a second of the first count as one. A later one means "kill now".
  let firstSignalAt: number | undefined;
  const onSignal = (signal: string): void => {
    const now = Date.now();
    if (firstSignalAt !== undefined && now - firstSignalAt < 1_000) return;
    if (firstSignalAt !== undefined) {
      console.error(`npm start: ${signal} again: killing everything`);
      for (const c of [...running, ...infrastructure]) c.kill();
      releaseClaim();
      process.exit(130);
    }
    firstSignalAt = now;
    console.error(`npm start: ${signal}: stopping (press Ctrl-C again to kill)`);
    void shutdown(0);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => onSignal(signal));
  // The parent (npm, a shell) killed without passing the signal on: stop too, instead of living on as an orphan.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) onSignal("parent process gone");
  }, 1_000).unref();

  let infra: Infrastructure;
  try {
    infrastructureStarting = startInfrastructure(
      {
        databaseUrl: env["DATABASE_URL"] || undefined,
        natsUrl: env["NATS_URL"] || undefined,
        dataDir,
        postgresPort,
        natsPort,
        postgresPassword: env["EMBEDDED_PG_PASSWORD"] ?? "byok-local",
      },
      print,
      env,
    );
    infra = await infrastructureStarting;
  } catch (err) {
    if (stopping) return;
    if (err instanceof InfrastructureError || err instanceof ChildStartError) fail(err.message);
    throw err;
  }
  infrastructureStarting = undefined;
  infrastructure = infra.children;
  if (stopping) return;
  // Where the adapter really listens (PORT may be 0): the edge proxy, started after it, forwards there.
  let adapterUrl: string | undefined = env["ADAPTER_URL"];

  const envOf = new Map<string, NodeJS.ProcessEnv>();
  for (const wave of SERVICE_WAVES) {
    const started = wave.map((service) => {
      const childEnv = serviceEnv(service, env, infra, configPath, keyVariables, adapterUrl, dataDir, adminToken);
      envOf.set(service, childEnv);
      const child = new SupervisedChild(
        {
          name: service,
          command: process.execPath,
          args: [resolve(ROOT, "services", service, "src", "main.ts")],
          env: childEnv,
          ipc: true,
        },
        print,
      );
      running.push(child);
      void child.exited.then((exit) => {
        // An exit before "started" is reported by ready() below.
        if (stopping || !child.hasStarted) return;
        console.error(`npm start: ${service} stopped unexpectedly (${describeExit(exit)}); stopping the gateway`);
        void shutdown(1);
      });
      return child;
    });
    const results = await Promise.allSettled(started.map((c) => c.ready(READY_TIMEOUT_MS)));
    if (stopping) return;
    const failed = results.flatMap((r, i) => (r.status === "rejected" ? [{ service: started[i]!.name, err: r.reason as Error }] : []));
    if (failed.length > 0) {
      for (const { service, err } of failed) console.error(`npm start: ${err instanceof ChildStartError ? startFailureMessage(service, err, envOf.get(service) ?? env) : err.message}`);
      await shutdown(1);
    }
    const adapter = started.find((c) => c.name === "cursor-adapter");
    if (adapter?.endpoints["url"] !== undefined && env["ADAPTER_URL"] === undefined) adapterUrl = reachableUrl(adapter.endpoints["url"]);
  }

  const proxy = running.find((c) => c.name === "edge-proxy")!;
  const admin = running.find((c) => c.name === "admin");
  const proxyListen = new URL(proxy.endpoints["url"] ?? "http://127.0.0.1:8080").host;
  info = {
    ...info,
    state: "running",
    natsUrl: infra.natsUrl,
    busPrefix: env["BUS_PREFIX"] || "byok",
    proxyUrl: reachableUrl(proxy.endpoints["url"] ?? "http://127.0.0.1:8080"),
    proxyListen,
    caFile: proxy.endpoints["caFile"] ?? resolve(dataDir, "edge-proxy", "ca", "ca.crt"),
    ...(adapterUrl !== undefined ? { adapterUrl } : {}),
    ...(admin?.endpoints["url"] !== undefined ? { adminUrl: reachableUrl(admin.endpoints["url"]) } : {}),
    services: Object.fromEntries(running.flatMap((c) => (c.pid !== undefined ? [[c.name, c.pid]] : []))),
  };
  updateLocalGateway(dataDir, info);
  const acp = running.find((c) => c.name === "acp-adapter")?.endpoints["url"];
  const ready = readyLines({
    proxyUrl: info.proxyUrl!,
    proxyListen,
    caFile: info.caFile!,
    acpUrl: acp === undefined ? undefined : reachableUrl(acp),
    adminUrl: info.adminUrl,
    adminToken: adminToken.where,
  });
  for (const line of ready) console.error(`npm start: ${line}`);
}

await main();
