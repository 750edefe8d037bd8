/**
 * Runs the gateway services of docker-compose.yml as local processes, each
 * with exactly its compose environment, translated the way a container host
 * would see it here:
 *
 * - the working directory is the repository (the image's WORKDIR /app is a
 *   copy of it), `node` is this Node, and the image's ENV comes first;
 * - `<service>:<port>` in a URL (nats:4222, postgres:5432, cursor-adapter:8787)
 *   becomes a loopback address: the stand-ins given for the infrastructure
 *   services, or the free port allocated to the gateway service that listens
 *   on that port (its listen variable, e.g. the adapter's PORT);
 * - a wildcard listen host (0.0.0.0) becomes 127.0.0.1; each replica of a
 *   listening service gets its own port;
 * - the load-balancing front (an `haproxy:` image service) runs as a local
 *   haproxy with the same configuration file, its frontends on loopback ports
 *   and each backend's Docker DNS template replaced by the replicas' ports
 *   (tests/compose/haproxy-config.ts);
 * - a container path under a mount target becomes the mount's local source
 *   (a bind mount's file, a named volume's directory), any other /app/ path
 *   the same path in the repository;
 * - per-test isolation: BUS_PREFIX becomes the test's prefix and the store's
 *   DATABASE_URL the test database (after the test checked that it names the
 *   postgres service's user, password and database).
 *
 * A reference nothing answers (a service name or port that does not exist)
 * fails before anything starts: that is the drift this guards against.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import net from "node:net";
import { createInterface } from "node:readline";
import { freePort } from "@byok/local-infra/local-servers";
import { parseServiceStatus, type ServiceEndpoints } from "@byok/platform/service-status";
import { commandOf, mountsOf, portsOf, serviceEnvironment, startOrder, type ComposeProject } from "./compose-file.ts";
import { localHaproxyConfig, parseHaproxyConfig } from "./haproxy-config.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const CONTAINER_WORKDIR = "/app";
const WILDCARD = new Set(["0.0.0.0", "::"]);

/** Which variables set where each gateway service listens (as its config reads them). */
export const LISTEN_VARIABLES: Readonly<Record<string, readonly { host: string; port: string }[]>> = {
  "acp-adapter": [{ host: "ACP_HOST", port: "ACP_PORT" }],
  "cursor-adapter": [{ host: "HOST", port: "PORT" }],
  "edge-proxy": [{ host: "PROXY_HOST", port: "PROXY_PORT" }],
  "provider-gateway": [{ host: "INBOUND_HOST", port: "INBOUND_PORT" }],
  admin: [{ host: "ADMIN_HOST", port: "ADMIN_PORT" }],
};
/** Every service's ops listener (/metrics, /healthz): in compose each container has its own; here each process needs its own port. */
const OPS_LISTENER = { host: "METRICS_HOST", port: "METRICS_PORT" };
/** Where the haproxy image reads its configuration. */
const HAPROXY_CONFIG_TARGET = "/usr/local/etc/haproxy/haproxy.cfg";

export interface StandIns {
  /** "<infrastructure service>:<container port>" -> local "host:port", e.g. { "nats:4222": "127.0.0.1:4222" }. */
  endpoints: Readonly<Record<string, string>>;
  busPrefix: string;
  /** What the store gets instead of the compose DATABASE_URL. */
  databaseUrl: string;
  /** Where named volumes live (one directory each). */
  volumesDir: string;
}

export interface ProcessPlan {
  service: string;
  replica: number;
  command: string;
  args: string[];
  env: Record<string, string>;
}

export interface BalancerPlan {
  service: string;
  /** The haproxy configuration with local addresses. */
  config: string;
  /** Local ports of its frontends. */
  ports: number[];
}

export interface LocalComposePlan {
  processes: ProcessPlan[];
  /** Load-balancing fronts, started after the gateway services. */
  balancers: BalancerPlan[];
  /** "<service>:<container port>" -> local port, for every listening gateway service. */
  listening: Readonly<Record<string, number>>;
  /** The environment of one replica of `service`, as `docker compose exec <service>` sees it. */
  envOf(service: string): Record<string, string>;
  /** The local port a published container port is reachable on. */
  publishedPort(service: string, containerPort: number): number;
}

/** The gateway services: the ones built from this repository. */
export function gatewayServices(project: ComposeProject): string[] {
  return Object.entries(project.document.services)
    .filter(([, s]) => s.build !== undefined)
    .map(([name]) => name);
}

export async function planLocalCompose(project: ComposeProject, imageEnv: Readonly<Record<string, string>>, standIns: StandIns): Promise<LocalComposePlan> {
  const services = gatewayServices(project);
  const serviceNames = Object.keys(project.document.services);
  const envs = new Map(services.map((name) => [name, serviceEnvironment(project, name, imageEnv)]));

  // Listening ports first: a URL elsewhere may point at them.
  const endpoints: Record<string, string> = { ...standIns.endpoints };
  const listening: Record<string, number> = {};
  /** "<service>:<container port>" -> the local port of each replica. */
  const replicaPorts = new Map<string, number[]>();
  const replicaVariables = new Map<string, Array<{ variable: string; ports: number[] }>>();
  for (const [name, env] of envs) {
    const replicas = project.document.services[name]!.deploy?.replicas ?? 1;
    const perReplica: Array<{ variable: string; ports: number[] }> = [];
    for (const vars of [...(LISTEN_VARIABLES[name] ?? []), OPS_LISTENER]) {
      const containerPort = env[vars.port];
      if (containerPort === undefined || containerPort === "" || containerPort === "0") continue;
      // Replicas of one service share its env, so their ops ports would collide: only the first replica keeps one.
      const ports = vars === OPS_LISTENER ? [await freePort()] : await Promise.all(Array.from({ length: replicas }, () => freePort()));
      replicaPorts.set(`${name}:${containerPort}`, ports);
      if (vars !== OPS_LISTENER) perReplica.push({ variable: vars.port, ports });
      listening[`${name}:${containerPort}`] = ports[0]!;
      endpoints[`${name}:${containerPort}`] = `127.0.0.1:${ports[0]}`;
      env[vars.port] = String(ports[0]);
      if (WILDCARD.has(env[vars.host] ?? "")) env[vars.host] = "127.0.0.1";
    }
    replicaVariables.set(name, perReplica);
  }

  // Load-balancing fronts: their frontends are addresses too (the proxies' ADAPTER_URL, the published port).
  const balancers: BalancerPlan[] = [];
  for (const [name, service] of Object.entries(project.document.services)) {
    if (!String(service.image ?? "").startsWith("haproxy:")) continue;
    const mount = mountsOf(service).find((m) => m.target === HAPROXY_CONFIG_TARGET && m.kind === "bind");
    if (mount === undefined) throw new Error(`${name}: no configuration file is mounted at ${HAPROXY_CONFIG_TARGET}`);
    const text = readFileSync(isAbsolute(mount.source) ? mount.source : resolve(project.dir, mount.source), "utf8");
    const frontendPorts = new Map<number, number>();
    for (const frontend of parseHaproxyConfig(text).frontends) {
      const port = await freePort();
      frontendPorts.set(frontend.port, port);
      listening[`${name}:${frontend.port}`] = port;
      endpoints[`${name}:${frontend.port}`] = `127.0.0.1:${port}`;
    }
    balancers.push({ service: name, config: localHaproxyConfig(text, frontendPorts, replicaPorts), ports: [...frontendPorts.values()] });
  }

  const hostPattern = new RegExp(`(//|@)(${serviceNames.map((n) => n.replace(/[-.]/g, "\\$&")).join("|")}):(\\d+)`, "g");
  for (const name of services) {
    const env = envs.get(name)!;
    const mounts = mountsOf(project.document.services[name]!);
    for (const [key, value] of Object.entries(env)) {
      let mapped = value.replace(hostPattern, (_m, lead: string, host: string, port: string) => {
        const local = endpoints[`${host}:${port}`];
        if (local === undefined) throw new Error(`${name}: ${key}=${value} points at ${host}:${port}, where nothing listens`);
        return `${lead}${local}`;
      });
      if (mapped.startsWith(`${CONTAINER_WORKDIR}/`) || mapped === CONTAINER_WORKDIR) mapped = localPath(project, standIns, mounts, mapped);
      env[key] = mapped;
    }
    if (env["BUS_PREFIX"] !== undefined) env["BUS_PREFIX"] = standIns.busPrefix;
    if (env["DATABASE_URL"] !== undefined) env["DATABASE_URL"] = standIns.databaseUrl;
    // The image's PATH: node and the system tools (compose does not set one).
    env["PATH"] ??= `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
  }

  const processes: ProcessPlan[] = [];
  for (const name of startOrder(project.document).filter((n) => services.includes(n))) {
    const service = project.document.services[name]!;
    const [program, ...args] = commandOf(service);
    if (program !== "node") throw new Error(`${name}: command ${program} is not node`);
    for (let replica = 1; replica <= (service.deploy?.replicas ?? 1); replica++) {
      const env = { ...envs.get(name)! };
      if (replica > 1 && env[OPS_LISTENER.port] !== undefined) env[OPS_LISTENER.port] = "0";
      for (const { variable, ports } of replicaVariables.get(name) ?? []) env[variable] = String(ports[replica - 1]);
      processes.push({ service: name, replica, command: process.execPath, args, env });
    }
  }
  return {
    processes,
    balancers,
    listening,
    envOf: (service) => {
      const env = envs.get(service);
      if (env === undefined) throw new Error(`no gateway service ${service}`);
      return { ...env };
    },
    publishedPort: (service, containerPort) => {
      const published = portsOf(project.document.services[service]!).find((p) => p.target === containerPort);
      if (published === undefined) throw new Error(`${service} does not publish container port ${containerPort}`);
      const local = listening[`${service}:${containerPort}`];
      if (local === undefined) throw new Error(`${service} publishes container port ${containerPort}, but does not listen there (${JSON.stringify(listening)})`);
      return local;
    },
  };
}

function localPath(project: ComposeProject, standIns: StandIns, mounts: ReturnType<typeof mountsOf>, containerPath: string): string {
  const mount = mounts
    .filter((m) => containerPath === m.target || containerPath.startsWith(`${m.target}/`))
    .sort((a, b) => b.target.length - a.target.length)[0];
  if (mount === undefined) return join(ROOT, containerPath.slice(CONTAINER_WORKDIR.length));
  const rest = containerPath.slice(mount.target.length);
  if (mount.kind === "bind") return join(isAbsolute(mount.source) ? mount.source : resolve(project.dir, mount.source), rest);
  const volume = join(standIns.volumesDir, mount.source);
  mkdirSync(volume, { recursive: true });
  return join(volume, rest);
}

export interface RunningService {
  readonly name: string;
  readonly endpoints: ServiceEndpoints;
  readonly output: string[];
  readonly child: ChildProcess;
}

export interface LocalCompose {
  readonly services: readonly RunningService[];
  /** Everything every process printed, prefixed with its name (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts the plan's processes in dependency order, each once it reported "started". */
export async function startLocalCompose(plan: LocalComposePlan, timeoutMs = 60_000): Promise<LocalCompose> {
  const running: RunningService[] = [];
  const output = (): string => running.flatMap((s) => s.output.map((l) => `${s.name} | ${l}`)).join("\n");
  const stop = async (): Promise<void> => {
    for (const s of [...running].reverse()) {
      if (s.child.exitCode !== null || s.child.signalCode !== null) continue;
      const exited = new Promise<void>((r) => s.child.once("exit", () => r()));
      s.child.kill("SIGTERM");
      const timer = setTimeout(() => s.child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    for (const p of plan.processes) {
      const name = p.replica > 1 || plan.processes.filter((q) => q.service === p.service).length > 1 ? `${p.service}-${p.replica}` : p.service;
      const child = spawn(p.command, p.args, { cwd: ROOT, env: p.env, stdio: ["ignore", "pipe", "pipe", "ipc"] });
      const lines: string[] = [];
      createInterface({ input: child.stdout! }).on("line", (l) => lines.push(l));
      createInterface({ input: child.stderr! }).on("line", (l) => lines.push(l));
      const service: { name: string; endpoints: ServiceEndpoints; output: string[]; child: ChildProcess } = { name, endpoints: {}, output: lines, child };
      running.push(service);
      await new Promise<void>((resolveStarted, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} did not start within ${timeoutMs} ms`)), timeoutMs);
        child.on("message", (message) => {
          const status = parseServiceStatus(message);
          if (status?.kind === "started") {
            clearTimeout(timer);
            service.endpoints = status.endpoints;
            resolveStarted();
          } else if (status?.kind === "failed") {
            clearTimeout(timer);
            reject(new Error(`${name} failed to start: ${status.message}`));
          }
        });
        child.once("exit", (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited during start-up (${signal ?? code})`));
        });
      });
    }
    // Last, as compose starts it (depends_on the proxies and adapters): its first health checks find them up.
    for (const balancer of plan.balancers) running.push(await startHaproxy(balancer, timeoutMs));
  } catch (err) {
    const text = output();
    await stop();
    throw new Error(`${(err as Error).message}\n${text}`, { cause: err });
  }
  return { services: running, output, stop };
}

/** A local haproxy with the balancer's configuration; resolves once every frontend accepts connections. */
async function startHaproxy(balancer: BalancerPlan, timeoutMs: number): Promise<RunningService> {
  const dir = mkdtempSync(join(tmpdir(), "byok-haproxy-"));
  const file = join(dir, "haproxy.cfg");
  writeFileSync(file, balancer.config);
  const child = spawn("haproxy", ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (l) => lines.push(l));
  createInterface({ input: child.stderr! }).on("line", (l) => lines.push(l));
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (err) => reject(new Error(`${balancer.service}: cannot run haproxy (Debian: apt-get install haproxy): ${err.message}`)));
    child.once("exit", (code) => reject(new Error(`${balancer.service}: haproxy exited (${code}):\n${lines.join("\n")}`)));
  });
  const deadline = Date.now() + timeoutMs;
  const accepting = async (): Promise<void> => {
    for (const port of balancer.ports) {
      for (;;) {
        const ok = await new Promise<boolean>((r) => {
          const socket = net.connect(port, "127.0.0.1", () => {
            socket.destroy();
            r(true);
          });
          socket.once("error", () => r(false));
        });
        if (ok) break;
        if (Date.now() > deadline) throw new Error(`${balancer.service}: haproxy does not listen on ${port}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  await Promise.race([accepting(), failed]);
  failed.catch(() => undefined);
  return { name: balancer.service, endpoints: {}, output: lines, child };
}
