/**
 * The Postgres boundary: the connection pool, schema migrations and
 * transactions. Every error thrown by `pg` is mapped here, once, into a
 * DatabaseFailure; nothing above this module looks at pg error codes.
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { migrate } from "postgres-migrations";
import type { Logger } from "@byok/platform";
import type { Outcome } from "./outcome.ts";

export type Queryable = pg.Pool | pg.PoolClient;
export type Transaction = pg.PoolClient;

export type DatabaseFailureKind =
  /** Server unreachable, connection lost, too many connections. */
  | "unavailable"
  /** Serialization failure or deadlock that survived every retry. */
  | "conflict"
  /** A constraint (including the append-only triggers) rejected the write. */
  | "constraint"
  | "migration"
  | "unknown";

export class DatabaseFailure extends Error {
  override readonly name = "DatabaseFailure";
  readonly kind: DatabaseFailureKind;
  readonly code: string | undefined;
  constructor(kind: DatabaseFailureKind, message: string, code: string | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.code = code;
  }
}

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations", import.meta.url));

const RETRYABLE_CODES = new Set(["40001", "40P01"]);
const MAX_TRANSACTION_ATTEMPTS = 4;

/**
 * Codes meaning "the server is not reachable right now": Node socket errors
 * (connecting or on an open connection), SQLSTATE 53300 (too many
 * connections) and 57P01-57P03 (admin / crash shutdown, cannot connect now).
 * Class 08 (connection exception) is matched by prefix.
 */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "53300",
  "57P01",
  "57P02",
  "57P03",
]);

/** Maps any error from pg (or the socket below it) to a DatabaseFailure. */
export function toDatabaseFailure(error: unknown): DatabaseFailure {
  if (error instanceof DatabaseFailure) return error;
  const code = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  // pg reports a connection lost mid-query without a code ("Connection terminated unexpectedly").
  if (code === undefined) return new DatabaseFailure("unavailable", message, undefined, { cause: error });
  if (RETRYABLE_CODES.has(code)) return new DatabaseFailure("conflict", message, code, { cause: error });
  if (code.startsWith("23")) return new DatabaseFailure("constraint", message, code, { cause: error });
  if (code.startsWith("08") || UNAVAILABLE_CODES.has(code)) return new DatabaseFailure("unavailable", message, code, { cause: error });
  return new DatabaseFailure("unknown", message, code, { cause: error });
}

export function createPool(databaseUrl: string, maxConnections: number, log: Logger): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: maxConnections });
  // An idle client losing its connection must not crash the process.
  pool.on("error", (err) => log.warn({ err: toDatabaseFailure(err) }, "idle database connection failed"));
  return pool;
}

/** A client taken from the pool for several statements; `release` gives it back (destroyed when broken or lost). */
export interface CheckedOut {
  readonly client: pg.PoolClient;
  release(broken?: boolean): void;
}

/**
 * Takes a client for several statements. A connection lost while the client
 * is out (a database restart) surfaces in the statement that meets it, but pg
 * also emits it as the client's 'error' event, which the pool only listens to
 * while the client is idle: unheard, it would crash the process. It is heard
 * here, and the lost client is destroyed instead of going back to the pool.
 */
export async function checkOut(pool: pg.Pool): Promise<CheckedOut> {
  const client = await pool.connect();
  let lost = false;
  const onError = (): void => {
    lost = true;
  };
  client.on("error", onError);
  return {
    client,
    release(broken = false) {
      client.removeListener("error", onError);
      client.release(broken || lost);
    },
  };
}

/** Applies pending migrations (numbered .sql files); a landed file that changed fails the start. */
export async function runMigrations(pool: pg.Pool, log: Logger): Promise<void> {
  const { client, release } = await checkOut(pool);
  try {
    const applied = await migrate({ client }, MIGRATIONS_DIR, { logger: (msg) => log.debug({ migrations: msg }) });
    if (applied.length > 0) log.info({ applied: applied.map((m) => m.fileName) }, "database migrations applied");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new DatabaseFailure("migration", `database migration failed: ${message}`, undefined, { cause: error });
  } finally {
    release();
  }
}

/**
 * Runs `work` in one READ COMMITTED transaction: commits when it returns ok,
 * rolls back when it returns a rejection or throws. Serialization failures and
 * deadlocks are retried a few times before they surface as a conflict.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: Transaction) => Promise<Outcome<T>>): Promise<Outcome<T>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptTransaction(pool, work);
    } catch (error) {
      const failure = toDatabaseFailure(error);
      if (failure.kind !== "conflict" || attempt >= MAX_TRANSACTION_ATTEMPTS) throw failure;
    }
  }
}

async function attemptTransaction<T>(pool: pg.Pool, work: (tx: Transaction) => Promise<Outcome<T>>): Promise<Outcome<T>> {
  const { client, release } = await checkOut(pool);
  let broken = false;
  try {
    await client.query("BEGIN");
    const outcome = await work(client);
    await client.query(outcome.kind === "ok" ? "COMMIT" : "ROLLBACK");
    return outcome;
  } catch (error) {
    try {
      await client.query("ROLLBACK");
    } catch {
      broken = true;
    }
    throw error;
  } finally {
    release(broken);
  }
}

/** A single statement outside an explicit transaction, with errors mapped. */
export async function query<R extends pg.QueryResultRow>(db: Queryable, text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>(text, values);
  } catch (error) {
    throw toDatabaseFailure(error);
  }
}

/** Statement names by text: the name is derived from the text, so one text always has one name. */
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * As `query`, as a named (prepared) statement: each connection parses and
 * plans it once and then only binds and executes it. For the hot paths' fixed
 * texts only (pg keeps every named statement per connection, without bound):
 * never for text built from input.
 */
export async function preparedQuery<R extends pg.QueryResultRow>(db: Queryable, text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>({ name: statementName(text), text, values });
  } catch (error) {
    throw toDatabaseFailure(error);
  }
}
