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
import { createPool, DatabaseFailure, inTransaction } from "./database.ts";
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
