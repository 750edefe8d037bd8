/**
 * The ACP adapter as one startable unit: a NATS connection, the run streams,
 * the session directory, the store client, and the bridge listener whose
 * every new link gets an ACP agent connection. Tests and the supervisor start
 * it in-process.
 */
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, createMetricsRegistry, natsToolSetStore, startOpsServer, ToolSets, type Logger, type NatsConnection } from "@byok/platform";
import { runStreamsOnce } from "@byok/run-client";
import { StoreClient } from "@byok/store-client";
import { serveAcp } from "./acp/agent-app.ts";
import { AcpAgent } from "./agent/acp-agent.ts";
import type { AcpAdapterConfig } from "./config.ts";
import { startLinkServer, type LinkServer } from "./link/link-server.ts";
import { cachedMemberKeys } from "./members/member-keys.ts";
import { createAcpAdapterMetrics } from "./metrics.ts";
import { PromptAssets } from "./prompting/prompt-assets.ts";
import { openSessionDirectory } from "./sessions/session-directory.ts";

export const ACP_ADAPTER_VERSION = "0.1.0";

export interface AcpAdapterOverrides {
  log?: Logger;
}

export interface AcpAdapter {
  /** wss://host:port (ws:// without TLS); the bridge's --gateway is https:// (http://) on the same host and port. */
  readonly url: string;
  readonly port: number;
  /** The bridge listener (tests drop its sockets to cut the network). */
  readonly links: LinkServer;
  /** http://host:port of the ops listener (/metrics, /healthz); undefined without METRICS_PORT. */
  readonly opsUrl: string | undefined;
  stop(): Promise<void>;
}

export async function startAcpAdapter(config: AcpAdapterConfig, overrides: AcpAdapterOverrides = {}): Promise<AcpAdapter> {
  const log = overrides.log ?? createLogger({ service: "acp-adapter", level: config.logLevel, debugContent: config.logDebugContent });
  const prompts = new PromptAssets(config.promptDir);
  // Broken prompt assets fail the start, not the first prompt.
  for (const mode of ["ask", "agent", "plan"] as const) prompts.systemText(mode, "check");
  prompts.toolCatalog();

  const registry = createMetricsRegistry("acp-adapter", config.metrics);
  let links: LinkServer | undefined;
  const metrics = createAcpAdapterMetrics(registry, { links: () => links?.links().length ?? 0 });
  const nc: NatsConnection = await connectNats(config.natsUrl, "acp-adapter", log);
  let ops;
  try {
    const names = busNames(config.busPrefix);
    const ensureStreams = runStreamsOnce(nc, names);
    await ensureStreams();
    const directory = await openSessionDirectory(nc, names);
    const store = new StoreClient(nc, names, { timeoutMs: config.timeouts.storeMs });
    const agent = new AcpAgent({
      store,
      directory,
      prompts,
      models: config.models,
      defaultModelId: config.defaultModelId,
      turn: {
        nc,
        names,
        ensureStreams,
        toolSets: new ToolSets(natsToolSetStore(nc, names), log.child({ component: "tool-sets" })),
        timeouts: {
          publishDeadlineMs: config.timeouts.publishDeadlineMs,
          runStatusCheckMs: config.timeouts.runStatusCheckMs,
          cancelGraceMs: config.timeouts.cancelGraceMs,
        },
        limits: config.tools,
        metrics,
      },
      version: ACP_ADAPTER_VERSION,
      log,
    });
    links = await startLinkServer({
      host: config.host,
      port: config.port,
      tls: config.tls,
      resumeMs: config.timeouts.linkResumeMs,
      pingMs: config.timeouts.linkPingMs,
      verifyKey: cachedMemberKeys(store, config.timeouts.memberCacheMs),
      onNewLink: (link) => serveAcp(link, agent, log.child({ link_id: link.id, member_id: link.memberId })),
      metrics,
      log,
    });
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => !nc.isClosed() });
  } catch (error) {
    await links?.stop();
    await nc.close();
    throw error;
  }
  const listening = links;
  const opsServer = ops;
  log.info({ url: listening.url, models: config.models.map((m) => m.id), tls: config.tls !== undefined }, "acp adapter listening");
  return {
    url: listening.url,
    port: listening.port,
    links: listening,
    opsUrl: opsServer.url,
    async stop() {
      await listening.stop();
      // Let the sessions' last publishes (cancel commands for open runs) reach the bus.
      if (!nc.isClosed()) await nc.drain();
      await opsServer.stop();
    },
  };
}
