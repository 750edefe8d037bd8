/**
 * Migration 3 on a database that already has members: each member's key
 * becomes its first member key (still verifying, revoked with its member),
 * every member lands in the default team, and members.key_hash is gone.
 */
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import { migrate } from "postgres-migrations";
import { busNames, DEFAULT_TEAM_ID, STORE_OPERATIONS } from "@byok/contracts";
import { busRequest, silentLogger } from "@byok/platform";
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { loadConfig } from "../config.ts";
import { startStore, type RunningStore } from "../service.ts";
import { keyHash } from "./member-keys.ts";

const MIGRATIONS = fileURLToPath(new URL("../migrations", import.meta.url));

describe("migration 3 (control plane)", () => {
  let database: TestDatabase;
  let bus: TestBus;
  let store: RunningStore | undefined;
  let nc: NatsConnection | undefined;
  let dir: string;

  beforeEach(async () => {
    database = await createTestDatabase();
    bus = createTestBus();
    dir = await mkdtemp(join(tmpdir(), "byok-migrations-"));
  });
  afterEach(async () => {
    await nc?.close();
    await store?.stop();
    await bus.cleanup();
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("keeps every existing member's key working and puts the members in the default team", async () => {
    for (const file of ["1_initial-schema.sql", "2_runs-member-created-index.sql"]) await copyFile(join(MIGRATIONS, file), join(dir, file));
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await migrate({ client }, dir);
      await client.query("INSERT INTO members (id, name, key_hash) VALUES ($1, 'old-ada', $2), ($3, 'old-bob', $4)", [
        "11111111-1111-4111-8111-111111111111",
        keyHash("byok_ada-key-from-before"),
        "22222222-2222-4222-8222-222222222222",
        keyHash("byok_bob-key-from-before"),
      ]);
      await client.query("UPDATE members SET revoked_at = now() WHERE name = 'old-bob'");
    } finally {
      await client.end();
    }

    store = await startStore(loadConfig({ DATABASE_URL: database.url, NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix }), { log: silentLogger() });
    nc = await connect({ servers: bus.natsUrl });
    const verify = (key: string) => busRequest(nc!, busNames(bus.prefix).store(STORE_OPERATIONS.verifyMemberKey.name), STORE_OPERATIONS.verifyMemberKey.request, { key }, STORE_OPERATIONS.verifyMemberKey.response, { timeoutMs: 5_000 });
    expect(await verify("byok_ada-key-from-before")).toMatchObject({ memberId: "11111111-1111-4111-8111-111111111111", name: "old-ada", teamId: DEFAULT_TEAM_ID });
    expect((await verify("byok_bob-key-from-before")).error).toBeDefined();

    const check = new pg.Client({ connectionString: database.url });
    await check.connect();
    try {
      const keys = await check.query("SELECT member_id, label, revoked_at IS NOT NULL AS revoked FROM member_keys ORDER BY member_id");
      expect(keys.rows).toEqual([
        { member_id: "11111111-1111-4111-8111-111111111111", label: "first key", revoked: false },
        { member_id: "22222222-2222-4222-8222-222222222222", label: "first key", revoked: true },
      ]);
      const column = await check.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'members' AND column_name = 'key_hash'");
      expect(column.rowCount).toBe(0);
    } finally {
      await check.end();
    }
  });
});
