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
import { ok, type Outcome } from "./outcome.ts";

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

/**
 * The pool's connections are pipelined: a statement is written as soon as it is
 * issued, not when the one before it has answered. Code that awaits each
 * statement behaves as before; statements issued together (`together`, and a
 * transaction's BEGIN and COMMIT, see inTransaction) share one round trip.
 */
export function createPool(databaseUrl: string, maxConnections: number, log: Logger): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: maxConnections, pipeline: true });
  pool.on("connect", writeTogether);
  // An idle client losing its connection must not crash the process.
  pool.on("error", (err) => log.warn({ err: toDatabaseFailure(err) }, "idle database connection failed"));
  return pool;
}

/** The socket under a pg client (pg keeps it on its connection; absent on other transports). */
interface CorkableSocket {
  cork(): void;
  uncork(): void;
}

function socketOf(client: pg.ClientBase): CorkableSocket | undefined {
  const stream = (client as unknown as { connection?: { stream?: Partial<CorkableSocket> } }).connection?.stream;
  return typeof stream?.cork === "function" && typeof stream.uncork === "function" ? (stream as CorkableSocket) : undefined;
}

/**
 * Statements a connection is given in one pass of the event loop (one
 * synchronous run and the promise jobs it starts: a transaction's BEGIN and
 * first statements, its writes and COMMIT) go to the server in one socket
 * write: the socket is corked at the first and uncorked on the next tick.
 * pg corks each extended-protocol statement on its own (parse, bind,
 * describe, execute, sync), so without this a pipelined round trip of three
 * statements was three writes, and the server's backend woke up for each.
 * Nothing waits longer: the uncork comes before any I/O is polled.
 */
function writeTogether(client: pg.ClientBase): void {
  const socket = socketOf(client);
  if (socket === undefined) return;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  const query = client.query as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: unknown, ...args: unknown[]) {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return query.apply(this, args);
  };
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
 * How a transaction's work ends: an outcome (ok commits, a rejection rolls
 * back), or `commitBehind` its last statement.
 */
export type TransactionEnd<T> = Outcome<T> | { readonly kind: "commit_behind"; readonly last: Promise<T> };

/**
 * Ends a transaction with its last statement, already issued and not awaited:
 * the COMMIT is written right behind it, so the two share one round trip. The
 * outcome is ok with `last`'s value. A failing statement aborts the transaction
 * (the COMMIT then only rolls it back) and its error is thrown as from any
 * statement. Every statement of `last` must be issued already (no statement
 * issued after an await inside it: that one would land behind the COMMIT,
 * outside the transaction), and `last` must only fail by a statement failing:
 * what it computes after the statements answered runs once the COMMIT is on
 * its way.
 */
export function commitBehind<T>(last: Promise<T>): TransactionEnd<T> {
  // Heard at once: it may fail before the transaction awaits it.
  last.catch(() => undefined);
  return { kind: "commit_behind", last };
}

/**
 * Awaits statements issued together, in the order they were issued. On a
 * pipelined connection (createPool) they were written without waiting for
 * each other: one round trip for all. The server still runs them one after
 * the other, each with a fresh snapshot (READ COMMITTED) and the locks the
 * earlier ones took, so a read issued behind a locking statement sees the
 * locked rows as they are. The first failure is thrown once every statement
 * has answered (none is left unheard).
 */
export async function together<T extends readonly unknown[]>(...statements: { readonly [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(statements);
  const values: unknown[] = [];
  for (const result of settled) {
    if (result.status === "rejected") throw result.reason;
    values.push(result.value);
  }
  return values as unknown as T;
}

/**
 * Runs `work` in one READ COMMITTED transaction: commits when it returns ok
 * (or `commitBehind`), rolls back when it returns a rejection or throws.
 * Serialization failures and deadlocks are retried a few times before they
 * surface as a conflict. BEGIN is not awaited before `work` starts: its first
 * statement goes out right behind BEGIN (one round trip for both).
 */
export async function inTransaction<T>(pool: pg.Pool, work: (tx: Transaction) => Promise<TransactionEnd<T>>): Promise<Outcome<T>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptTransaction(pool, work);
    } catch (error) {
      const failure = toDatabaseFailure(error);
      if (failure.kind !== "conflict" || attempt >= MAX_TRANSACTION_ATTEMPTS) throw failure;
    }
  }
}

async function attemptTransaction<T>(pool: pg.Pool, work: (tx: Transaction) => Promise<TransactionEnd<T>>): Promise<Outcome<T>> {
  const { client, release } = await checkOut(pool);
  let broken = false;
  // BEGIN cannot fail on a connection that still answers: a lost one fails the statements behind it too.
  const begun = client.query("BEGIN").then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  try {
    const end = await work(client);
    const beginFailed = await begun;
    if (beginFailed) throw beginFailed.error;
    if (end.kind === "commit_behind") {
      const [value] = await together(end.last, client.query("COMMIT"));
      return ok(value);
    }
    await client.query(end.kind === "ok" ? "COMMIT" : "ROLLBACK");
    return end;
  } catch (error) {
    await begun;
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
