/**
 * Real infrastructure for tests: a fresh Postgres database and a private NATS
 * subject/stream prefix per test, both removed afterwards, so test files can run
 * in parallel and leave nothing behind. Uses DATABASE_URL / NATS_URL: in an
 * integration test run they name the run's servers (run-infra/global-setup.ts
 * sets them in every worker); elsewhere (benchmarks) they come from the
 * environment, defaulting to the machine's local services.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";

export const ADMIN_DATABASE_URL = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const NATS_URL = process.env["NATS_URL"] ?? "nats://127.0.0.1:4222";

function suffix(): string {
  return randomBytes(5).toString("hex");
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** Creates an empty database `byok_test_<random>` on the DATABASE_URL server (or on the server of `adminUrl`). */
export async function createTestDatabase(adminUrl: string = ADMIN_DATABASE_URL): Promise<TestDatabase> {
  const name = `byok_test_${suffix()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface TestBus {
  /** Subject prefix for this test (pass as BUS_PREFIX). */
  readonly prefix: string;
  readonly natsUrl: string;
  /** Deletes every JetStream stream (and KV bucket) created under this prefix. */
  cleanup(): Promise<void>;
}

/** A private prefix on the NATS_URL server (or on the server at `natsUrl`). */
export function createTestBus(natsUrl: string = NATS_URL): TestBus {
  const prefix = `t${suffix()}`;
  return {
    prefix,
    natsUrl,
    async cleanup() {
      const nc = await connect({ servers: natsUrl.split(",") });
      try {
        const jsm = await jetstreamManager(nc);
        const upper = prefix.toUpperCase();
        for await (const info of jsm.streams.list()) {
          // KV buckets live in streams named KV_<bucket>, object stores in OBJ_<bucket>.
          if (info.config.name.startsWith(`${upper}_`) || info.config.name.startsWith(`KV_${upper}_`) || info.config.name.startsWith(`OBJ_${upper}_`)) await jsm.streams.delete(info.config.name);
        }
      } finally {
        await nc.close();
      }
    },
  };
}

/** Polls `condition` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(condition: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
