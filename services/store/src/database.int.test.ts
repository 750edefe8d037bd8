/**
 * A connection lost while a transaction holds it (what a database restart
 * does to the store): the transaction fails with a typed failure, the process
 * survives (pg also emits the loss as the client's 'error' event, which would
 * be an uncaught exception if nobody listened), and the pool goes on with a
 * new connection.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "@byok/platform";
import { createTestDatabase, waitFor, type TestDatabase } from "@byok/test-support/infra";
import { countSocketWrites } from "@byok/test-support/socket-writes";
import { commitBehind, createPool, DatabaseFailure, inTransaction, preparedQuery, together } from "./database.ts";
import { ok } from "./outcome.ts";

describe("a transaction whose connection is lost", () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let admin: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url, 2, silentLogger());
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await pool.end();
    await db.drop();
  });

  it("fails as a database failure, does not crash the process, and the pool reconnects", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown): void => void uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      const failed = await inTransaction(pool, async (tx) => {
        const pid = (await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
        // Another session ends this one between two statements, as a restart does.
        await admin.query("SELECT pg_terminate_backend($1)", [pid]);
        await waitFor(async () => (await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).rowCount === 0, "the session to end");
        await tx.query("SELECT 1");
        return ok(undefined);
      }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(DatabaseFailure);
      expect(uncaught).toEqual([]);
      const again = await inTransaction(pool, async (tx) => ok((await tx.query<{ n: number }>("SELECT 1 AS n")).rows[0]!.n));
      expect(again).toEqual(ok(1));
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });
});

/**
 * Statements issued together (one round trip on the pipelined pool) and a
 * COMMIT written behind the transaction's last statement: a failure anywhere
 * still rolls the whole transaction back, surfaces as a DatabaseFailure and
 * leaves no statement unheard.
 */
describe("pipelined transactions", () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url, 2, silentLogger());
    await pool.query("CREATE TABLE marks (id integer PRIMARY KEY)");
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  async function marks(): Promise<number[]> {
    return (await pool.query<{ id: number }>("SELECT id FROM marks ORDER BY id")).rows.map((r) => r.id);
  }

  it("writes the statements of one round trip in one socket write (BEGIN with the first, COMMIT with the last)", async () => {
    await pool.query("TRUNCATE marks");
    await pool.query("SELECT 1"); // both round trips below on a connection that is already open
    const writes = await countSocketWrites(async () => {
      const outcome = await inTransaction(pool, async (tx) => {
        const [, seen] = await together(
          preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [1]),
          preparedQuery<{ n: number }>(tx, "SELECT count(*)::integer AS n FROM marks", []),
        );
        return commitBehind(preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [1 + seen.rows[0]!.n]).then(() => "done"));
      });
      expect(outcome).toEqual(ok("done"));
    });
    // Without writing together: BEGIN, three statements and COMMIT, five writes.
    expect(writes).toBe(2);
    expect(await marks()).toEqual([1, 2]);
  });

  it("runs statements issued together in order, each seeing the ones before", async () => {
    await pool.query("TRUNCATE marks");
    const outcome = await inTransaction(pool, async (tx) => {
      const [, seen] = await together(
        preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [1]),
        preparedQuery<{ n: number }>(tx, "SELECT count(*)::integer AS n FROM marks WHERE id = $1", [1]),
      );
      return ok(seen.rows[0]!.n);
    });
    expect(outcome).toEqual(ok(1));
    expect(await marks()).toEqual([1]);
  });

  it("commits behind the last statement, and a failing last statement rolls everything back", async () => {
    await pool.query("TRUNCATE marks");
    const committed = await inTransaction(pool, async (tx) => {
      await preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [1]);
      return commitBehind(preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [2]).then(() => "written"));
    });
    expect(committed).toEqual(ok("written"));
    expect(await marks()).toEqual([1, 2]);

    const failed = await inTransaction(pool, async (tx) => {
      await preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [3]);
      // A duplicate key: the transaction aborts and the COMMIT behind it only rolls back.
      return commitBehind(preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [1]));
    }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(DatabaseFailure);
    expect((failed as DatabaseFailure).kind).toBe("constraint");
    expect(await marks()).toEqual([1, 2]);
  });

  it("a failure among statements issued together fails the transaction once all have answered", async () => {
    await pool.query("TRUNCATE marks");
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const failed = await inTransaction(pool, async (tx) => {
        await together(
          preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [5]),
          preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [5]),
          // Behind the failure, in the aborted transaction: fails too, and is heard.
          preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [6]),
        );
        return ok(undefined);
      }).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(DatabaseFailure);
      expect((failed as DatabaseFailure).kind).toBe("constraint");
      expect(await marks()).toEqual([]);
      // The connection is clean for the next transaction (no transaction left open, no statement pending).
      const again = await inTransaction(pool, async (tx) => commitBehind(preparedQuery(tx, "INSERT INTO marks (id) VALUES ($1)", [7])));
      expect(again.kind).toBe("ok");
      expect(await marks()).toEqual([7]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
