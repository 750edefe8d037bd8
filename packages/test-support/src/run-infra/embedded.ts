/**
 * Postgres and NATS started on this machine for one test run, the way
 * `npm start` starts them (@byok/local-infra), on free ports, with their data
 * in a temporary directory that is removed afterwards.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { embeddedPostgresCommand, findOnPath, freePort, LocalInfraError, MISSING_NATS_SERVER, natsServerCommand } from "@byok/local-infra/local-servers";
import { startServerProcess } from "@byok/local-infra/server-process";
import type { RunningServer } from "./containers.ts";

export interface EmbeddedRoot {
  readonly dir: string;
  remove(): Promise<void>;
}

/** A temporary directory for the servers' data. */
export async function embeddedRoot(): Promise<EmbeddedRoot> {
  const dir = await mkdtemp(join(tmpdir(), "byok-test-infra-"));
  // As root, Postgres runs as the `postgres` user: it must be able to reach its data directory.
  await chmod(dir, 0o755);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export async function startEmbeddedNats(root: EmbeddedRoot, env: NodeJS.ProcessEnv): Promise<RunningServer> {
  const executable = findOnPath("nats-server", env["PATH"]);
  if (executable === undefined) throw new LocalInfraError(`${MISSING_NATS_SERVER} (Or run the tests where Docker is available.)`);
  const server = await startServerProcess(natsServerCommand({ executable, port: await freePort(), storeDir: join(root.dir, "nats"), env }));
  return { url: server.url, stop: () => server.stop() };
}

export async function startEmbeddedPostgres(root: EmbeddedRoot, env: NodeJS.ProcessEnv): Promise<RunningServer> {
  const command = embeddedPostgresCommand({
    dataDir: join(root.dir, "postgres"),
    port: await freePort(),
    password: randomBytes(12).toString("hex"),
    database: "byok",
    env,
  });
  const server = await startServerProcess(command);
  // Tests create their own databases: hand them the server's admin database.
  const admin = new URL(server.url);
  admin.pathname = "/postgres";
  return { url: admin.toString(), stop: () => server.stop() };
}
