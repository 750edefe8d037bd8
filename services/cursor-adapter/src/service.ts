/**
 * The cursor adapter as one startable unit: the model list of its
 * configuration (narrowed per member to what its team allows), a NATS
 * connection and the run session factory, behind the HTTP listener. Tests and
 * the supervisor start it in-process.
 */
import { join } from "node:path";
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, createMetricsRegistry, ensureRunStreams, startOpsServer, type Logger, type NatsConnection } from "@byok/platform";
import { StoreClient } from "@byok/store-client";
import type { CursorAdapterConfig } from "./config.ts";
import { startAdapterServer, type AdapterServer } from "./connect/http-server.ts";
import { createCursorAdapterMetrics } from "./metrics.ts";
import { everyModel, teamModels, type MemberModels } from "./models/member-models.ts";
import { createRunSessionFactory } from "./session/factory.ts";
import { natsPeerLink } from "./transport/nats-peer-link.ts";
import type { RunSessionFactory } from "./transport/session-port.ts";
import { createCpuPool, type CpuPool } from "./cpu/cpu-pool.ts";

export interface CursorAdapterOverrides {
  log?: Logger;
  /** A session factory to use instead of the real run sessions (transport tests); no NATS connection is made. */
  sessionFactory?: RunSessionFactory;
}

export interface CursorAdapter {
  url: string;
  port: number;
  /** http://host:port of the ops listener (/metrics, /healthz); undefined without METRICS_PORT. */
  opsUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startCursorAdapter(config: CursorAdapterConfig, overrides: CursorAdapterOverrides = {}): Promise<CursorAdapter> {
  const log = overrides.log ?? createLogger({ service: "cursor-adapter", level: config.logLevel, debugContent: config.logDebugContent });
  const { models } = config;
  const registry = createMetricsRegistry("cursor-adapter", config.metrics);
  let server: AdapterServer | undefined;
  const metrics = createCursorAdapterMetrics(registry, {
    activeRuns: () => server?.activeRuns() ?? 0,
    openRunSseStreams: () => server?.openRunSseStreams() ?? 0,
  });

  let nc: NatsConnection | undefined;
  let cpu: CpuPool | undefined;
  let factory = overrides.sessionFactory;
  let memberModels: MemberModels = everyModel(models);
  if (!factory) {
    nc = await connectNats(config.natsUrl, "cursor-adapter", log);
    const names = busNames(config.busPrefix);
    memberModels = teamModels(models, new StoreClient(nc, names, { timeoutMs: config.timeouts.storeMs }), { ttlMs: config.modelListTtlMs, log });
    try {
      await ensureRunStreams(nc, names, { replicas: config.streamReplicas });
    } catch (err) {
      await nc.close();
      throw new Error(`cannot set up the run streams on NATS: ${(err as Error).message}`, { cause: err });
    }
    cpu = createCpuPool({ histories: config.historyInPool });
    factory = createRunSessionFactory({
      nc,
      names,
      log,
      models,
      web: config.web,
      converter: cpu.converter,
      histories: cpu.histories,
      promptDir: join(config.promptDir, "cursor"),
      timeouts: config.timeouts,
      metrics,
    });
  }

  const connection = nc;
  let ops;
  try {
    server = await startAdapterServer({
      host: config.host,
      port: config.port,
      factory,
      memberModels,
      heartbeatMs: config.heartbeatMs,
      runWaitMs: config.runWaitMs,
      endGraceMs: config.endGraceMs,
      ...(nc === undefined ? {} : { peers: natsPeerLink(nc, busNames(config.busPrefix), log) }),
      metrics,
      log,
    });
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => connection === undefined || !connection.isClosed(), nats: () => connection });
  } catch (err) {
    await server?.stop();
    await cpu?.close();
    await nc?.close();
    throw err;
  }

  const listening = server;
  const opsServer = ops;
  return {
    url: listening.url,
    port: listening.port,
    opsUrl: opsServer.url,
    stop: async () => {
      await listening.stop();
      // Let the sessions' last publishes (cancel commands for open runs) reach the bus.
      if (connection && !connection.isClosed()) await connection.drain();
      await opsServer.stop();
      await cpu?.close();
    },
  };
}
