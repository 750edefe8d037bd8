/**
 * The admin service: the admin page and its HTTP API (http/admin-server.ts),
 * reading and writing only through the store's request/reply API
 * (@byok/store-client), plus its ops listener (/metrics, /healthz).
 */
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, createMetricsRegistry, startOpsServer, type Logger, type NatsConnection } from "@byok/platform";
import { StoreClient } from "@byok/store-client";
import type { AdminStore } from "./actions/admin-actions.ts";
import type { AdminServiceConfig } from "./config.ts";
import { AdminAuth } from "./http/admin-auth.ts";
import { startAdminServer } from "./http/admin-server.ts";
import { loadPageAssets } from "./http/static-assets.ts";
import { createAdminMetrics } from "./metrics.ts";

export interface AdminServiceOverrides {
  readonly log?: Logger;
  /** A NATS connection owned by the caller (not closed by stop()). */
  readonly nc?: NatsConnection;
  /** Another store (tests). */
  readonly store?: AdminStore;
}

export interface RunningAdminService {
  /** http://host:port of the admin page. */
  readonly url: string;
  /** The ops listener; undefined without METRICS_PORT. */
  readonly opsUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startAdminService(config: AdminServiceConfig, overrides: AdminServiceOverrides = {}): Promise<RunningAdminService> {
  const log = overrides.log ?? createLogger({ service: "admin", level: config.logLevel, debugContent: config.logDebugContent });
  const registry = createMetricsRegistry("admin", config.metrics);
  const assets = loadPageAssets();
  const nc = overrides.nc ?? (await connectNats(config.natsUrl, "admin", log));
  const ownedNc = overrides.nc ? undefined : nc;
  const store = overrides.store ?? new StoreClient(nc, busNames(config.busPrefix), { timeoutMs: config.storeTimeoutMs });
  let ops;
  let server;
  try {
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => !nc.isClosed() });
    server = await startAdminServer({
      host: config.host,
      port: config.port,
      auth: new AdminAuth({ token: config.adminToken, sessionMs: config.sessionMs, cookieSecure: config.cookieSecure }),
      store,
      assets,
      metrics: createAdminMetrics(registry),
      log,
    });
  } catch (error) {
    await ops?.stop();
    await ownedNc?.close();
    throw error;
  }
  log.info({ url: server.url }, "admin page listening");
  const running = server;
  const opsServer = ops;
  let stopped: Promise<void> | undefined;
  return {
    url: running.url,
    opsUrl: opsServer.url,
    stop() {
      stopped ??= (async () => {
        await running.stop();
        await opsServer.stop();
        if (ownedNc) await ownedNc.drain();
      })();
      return stopped;
    },
  };
}
