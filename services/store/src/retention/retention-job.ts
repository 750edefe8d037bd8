/**
 * The scheduled retention pass (content-purge.ts): every RETENTION_INTERVAL_MS
 * on the store's clock, first shortly after start. With several store
 * replicas only one purges at a time (a Postgres advisory lock); the others
 * skip that round. retention.purge runs a pass on request.
 */
import type pg from "pg";
import type { Logger } from "@byok/platform";
import type { Clock, Timer } from "@byok/platform/clock";
import { checkOut, toDatabaseFailure } from "../database.ts";
import { purgeExpiredContent, type PurgeCounts } from "./content-purge.ts";

/** pg_try_advisory_lock key of the retention pass ("byok-ret"). */
const LOCK_KEY = 0x62796f6b2d726574n;

export interface RetentionJob {
  /** One pass now; undefined when another store replica is running one. */
  runNow(): Promise<PurgeCounts | undefined>;
  stop(): Promise<void>;
}

export interface RetentionJobOptions {
  readonly pool: pg.Pool;
  /** Timers of the schedule. */
  readonly clock: Clock;
  /** The time a pass cuts off at (the store's clock). */
  readonly now: () => Date;
  /** 0 = no schedule (retention.purge still works). */
  readonly intervalMs: number;
  readonly log: Logger;
}

export function startRetentionJob(options: RetentionJobOptions): RetentionJob {
  const { pool, clock, now, log } = options;
  let timer: Timer | undefined;
  let running: Promise<PurgeCounts | undefined> | undefined;
  let stopped = false;

  async function pass(): Promise<PurgeCounts | undefined> {
    const { client, release } = await checkOut(pool);
    try {
      const lock = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [LOCK_KEY.toString()]);
      if (lock.rows[0]?.locked !== true) return undefined;
      try {
        return await purgeExpiredContent(pool, now());
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY.toString()]);
      }
    } finally {
      release();
    }
  }

  function runNow(): Promise<PurgeCounts | undefined> {
    running ??= pass().finally(() => (running = undefined));
    return running;
  }

  function schedule(ms: number): void {
    if (stopped || options.intervalMs === 0) return;
    timer = clock.setTimeout(() => {
      runNow().then(
        (counts) => {
          if (counts !== undefined && counts.conversations > 0) log.info({ purged: counts }, "retention: conversation content deleted");
        },
        (err: unknown) => log.error({ err: toDatabaseFailure(err) }, "retention pass failed; trying again next interval"),
      ).finally(() => schedule(options.intervalMs));
    }, ms);
  }
  // The first pass a little after start, when the store is busy with nothing else.
  schedule(Math.min(options.intervalMs, 60_000));

  return {
    runNow,
    async stop() {
      stopped = true;
      timer?.cancel();
      await running?.catch(() => undefined);
    },
  };
}
