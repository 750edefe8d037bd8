/**
 * Postgres and NATS for `npm start`: the ones named by DATABASE_URL / NATS_URL,
 * or embedded ones started as supervised children, data under .data/. What to
 * start and how to tell it is ready comes from @byok/local-infra (the same
 * commands a test run without DATABASE_URL / NATS_URL uses).
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import {
  embeddedPostgresCommand,
  findOnPath,
  LocalInfraError,
  MISSING_NATS_SERVER,
  natsServerCommand,
  waitForPort,
  type ServerCommand,
} from "@byok/local-infra/local-servers";
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

export async function startInfrastructure(settings: InfrastructureSettings, print: PrintLine, env: NodeJS.ProcessEnv): Promise<Infrastructure> {
  const children: SupervisedChild[] = [];
  const launch = async (command: ServerCommand): Promise<string> => {
    const child = new SupervisedChild({ name: command.name, command: command.command, args: [...command.args], env: command.env, readyWhen: command.isReady }, print);
    children.push(child);
    await child.ready(command.readyTimeoutMs);
    return command.url;
  };
  try {
    let natsUrl = settings.natsUrl;
    if (natsUrl === undefined) {
      const natsServer = findOnPath("nats-server", env["PATH"]);
      if (natsServer === undefined) throw new InfrastructureError(MISSING_NATS_SERVER);
      const storeDir = resolve(settings.dataDir, "nats");
      mkdirSync(storeDir, { recursive: true });
      natsUrl = await launch(natsServerCommand({ executable: natsServer, port: settings.natsPort, storeDir, env }));
    }
    await waitForPort(new URL(natsUrl).hostname, Number(new URL(natsUrl).port || 4222), "NATS", 30_000).catch((err: unknown) => {
      throw err instanceof LocalInfraError ? new InfrastructureError(err.message) : err;
    });

    let databaseUrl = settings.databaseUrl;
    if (databaseUrl === undefined) {
      databaseUrl = await launch(
        embeddedPostgresCommand({ dataDir: resolve(settings.dataDir, "postgres"), port: settings.postgresPort, password: settings.postgresPassword, database: "byok", env }),
      );
    }
    return { databaseUrl, natsUrl, children };
  } catch (err) {
    await Promise.all(children.map((c) => c.stop(10_000)));
    throw err;
  }
}
