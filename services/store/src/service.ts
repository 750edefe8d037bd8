/** The store service: migrate the database, answer store requests on the bus, run the retention job. */
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, createMetricsRegistry, startOpsServer, type Logger, type NatsConnection } from "@byok/platform";
import { systemClock, type Clock } from "@byok/platform/clock";
import { serveStoreOperations } from "./bus-server.ts";
import type { StoreConfig } from "./config.ts";
import { createPool, runMigrations } from "./database.ts";
import { createStoreMetrics } from "./metrics.ts";
import { createHandlers } from "./operations.ts";
import { startRetentionJob } from "./retention/retention-job.ts";

export interface StoreOverrides {
  readonly log?: Logger;
  /** A NATS connection owned by the caller (not closed by stop()). */
  readonly nc?: NatsConnection;
  /** The store's clock (tests move it: key expiry, budget windows, lease expiry, retention cut-off). */
  readonly now?: () => Date;
  /** Timers of the retention schedule (tests pass a ManualClock). */
  readonly clock?: Clock;
}

export interface RunningStore {
  /** http://host:port of the ops listener (/metrics, /healthz); undefined without METRICS_PORT. */
  readonly opsUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startStore(config: StoreConfig, overrides: StoreOverrides = {}): Promise<RunningStore> {
  const log = overrides.log ?? createLogger({ service: "store", level: config.logLevel, debugContent: config.logDebugContent });
  const pool = createPool(config.databaseUrl, config.databasePoolSize, log);
  const registry = createMetricsRegistry("store", config.metrics);
  let nc: NatsConnection | undefined;
  let ops;
  try {
    await runMigrations(pool, log);
    nc = overrides.nc ?? (await connectNats(config.natsUrl, "store", log));
    const connection = nc;
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => !connection.isClosed(), nats: () => connection });
  } catch (error) {
    if (overrides.nc === undefined) await nc?.close();
    await pool.end();
    throw error;
  }
  const ownedNc = overrides.nc ? undefined : nc;
  const clock = overrides.clock ?? systemClock;
  const now = overrides.now ?? (() => new Date(clock.now()));
  const retention = startRetentionJob({ pool, clock, now, intervalMs: config.retentionIntervalMs, log });
  const server = serveStoreOperations(nc, busNames(config.busPrefix), createHandlers(pool, now, retention), log, createStoreMetrics(registry));
  // Make sure every subscription is registered with the server before callers send requests.
  await nc.flush();
  log.info({ bus_prefix: config.busPrefix }, "store serving requests");

  let stopped: Promise<void> | undefined;
  return {
    opsUrl: ops.url,
    stop() {
      stopped ??= (async () => {
        await server.close();
        await retention.stop();
        if (ownedNc) await ownedNc.drain();
        await pool.end();
        await ops.stop();
      })();
      return stopped;
    },
  };
}
