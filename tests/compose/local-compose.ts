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
 * - a wildcard listen host (0.0.0.0) becomes 127.0.0.1;
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
import { mkdirSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import net from "node:net";
import { createInterface } from "node:readline";
import { parseServiceStatus, type ServiceEndpoints } from "@byok/platform/service-status";
import { commandOf, mountsOf, portsOf, serviceEnvironment, startOrder, type ComposeProject } from "./compose-file.ts";

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

export interface LocalComposePlan {
  processes: ProcessPlan[];
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

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export async function planLocalCompose(project: ComposeProject, imageEnv: Readonly<Record<string, string>>, standIns: StandIns): Promise<LocalComposePlan> {
  const services = gatewayServices(project);
  const serviceNames = Object.keys(project.document.services);
  const envs = new Map(services.map((name) => [name, serviceEnvironment(project, name, imageEnv)]));

  // Listening ports first: a URL elsewhere may point at them.
  const endpoints: Record<string, string> = { ...standIns.endpoints };
  const listening: Record<string, number> = {};
  for (const [name, env] of envs) {
    for (const vars of [...(LISTEN_VARIABLES[name] ?? []), OPS_LISTENER]) {
      const containerPort = env[vars.port];
      if (containerPort === undefined || containerPort === "" || containerPort === "0") continue;
      const port = await freePort();
      listening[`${name}:${containerPort}`] = port;
      endpoints[`${name}:${containerPort}`] = `127.0.0.1:${port}`;
      env[vars.port] = String(port);
      if (WILDCARD.has(env[vars.host] ?? "")) env[vars.host] = "127.0.0.1";
    }
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
  // Replicas of one service share its env here, so their ops ports would collide: only the first replica keeps one.
  for (const name of startOrder(project.document).filter((n) => services.includes(n))) {
    const service = project.document.services[name]!;
    const [program, ...args] = commandOf(service);
    if (program !== "node") throw new Error(`${name}: command ${program} is not node`);
    for (let replica = 1; replica <= (service.deploy?.replicas ?? 1); replica++) {
      const env = { ...envs.get(name)! };
      if (replica > 1 && env[OPS_LISTENER.port] !== undefined) env[OPS_LISTENER.port] = "0";
      processes.push({ service: name, replica, command: process.execPath, args, env });
    }
  }
  return {
    processes,
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
  } catch (err) {
    const text = output();
    await stop();
    throw new Error(`${(err as Error).message}\n${text}`, { cause: err });
  }
  return { services: running, output, stop };
}
