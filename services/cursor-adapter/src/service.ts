/**
 * The cursor adapter as one startable unit: the model list from the gateway
 * configuration (narrowed per member to what its team allows), a NATS
 * connection and the run session factory, behind the HTTP listener. Tests and
 * the supervisor start it in-process.
 */
import { join } from "node:path";
import { busNames } from "@byok/contracts";
import {
  connectNats,
  createLogger,
  ensureRunStreams,
  loadGatewayConfigFile,
  type Logger,
  type ModelConfig,
  type NatsConnection,
} from "@byok/platform";
import { StoreClient } from "@byok/store-client";
import type { CursorAdapterConfig } from "./config.ts";
import { startAdapterServer } from "./connect/http-server.ts";
import { everyModel, teamModels, type MemberModels } from "./models/member-models.ts";
import { createRunSessionFactory } from "./session/factory.ts";
import type { RunSessionFactory } from "./transport/session-port.ts";

export interface CursorAdapterOverrides {
  log?: Logger;
  /** BYOK models to serve instead of the ones in the gateway configuration file. */
  models?: ModelConfig[];
  /** A session factory to use instead of the real run sessions (transport tests); no NATS connection is made. */
  sessionFactory?: RunSessionFactory;
}

export interface CursorAdapter {
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startCursorAdapter(config: CursorAdapterConfig, overrides: CursorAdapterOverrides = {}): Promise<CursorAdapter> {
  const log = overrides.log ?? createLogger({ service: "cursor-adapter", level: config.logLevel, debugContent: config.logDebugContent });
  const models = overrides.models ?? loadGatewayConfigFile(config.gatewayConfigPath).models;

  let nc: NatsConnection | undefined;
  let factory = overrides.sessionFactory;
  let memberModels: MemberModels = everyModel(models);
  if (!factory) {
    nc = await connectNats(config.natsUrl, "cursor-adapter", log);
    const names = busNames(config.busPrefix);
    memberModels = teamModels(models, new StoreClient(nc, names, { timeoutMs: config.timeouts.storeMs }), { ttlMs: config.modelListTtlMs, log });
    try {
      await ensureRunStreams(nc, names);
    } catch (err) {
      await nc.close();
      throw new Error(`cannot set up the run streams on NATS: ${(err as Error).message}`, { cause: err });
    }
    factory = createRunSessionFactory({
      nc,
      names,
      log,
      models,
      promptDir: join(config.promptDir, "cursor"),
      timeouts: config.timeouts,
    });
  }

  let server;
  try {
    server = await startAdapterServer({
      host: config.host,
      port: config.port,
      factory,
      memberModels,
      heartbeatMs: config.heartbeatMs,
      runWaitMs: config.runWaitMs,
      endGraceMs: config.endGraceMs,
      log,
    });
  } catch (err) {
    await nc?.close();
    throw err;
  }

  const connection = nc;
  return {
    url: server.url,
    port: server.port,
    stop: async () => {
      await server.stop();
      // Let the sessions' last publishes (cancel commands for open runs) reach the bus.
      if (connection && !connection.isClosed()) await connection.drain();
    },
  };
}
