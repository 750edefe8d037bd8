/**
 * The provider gateway: binds every configured route to its endpoint adapter
 * (SDK clients with the keys, which never leave this process) and serves
 * model calls on the bus. `startProviderGateway` runs the real service
 * in-process (main.ts, the supervisor and tests).
 */
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, createMetricsRegistry, startOpsServer, type Logger, type NatsConnection } from "@byok/platform";
import { passThroughAccounting, type CallAccounting } from "./accounting/call-accounting.ts";
import { bindRoutes } from "./adapters/index.ts";
import type { ProviderGatewayConfig } from "./config.ts";
import { serveModelCalls } from "./invoke-server.ts";
import { createProviderGatewayMetrics, type ProviderGatewayMetrics } from "./metrics.ts";
import type { ModelCallOptions } from "./model-call.ts";

export interface ProviderGatewayOverrides {
  readonly log?: Logger;
  /** Use this connection instead of opening one (it is not closed on stop). */
  readonly nc?: NatsConnection;
  readonly backoff?: ModelCallOptions["backoff"];
  /** Budgets, limits and ledger (default: pass-through, admits everything). */
  readonly accounting?: CallAccounting;
}

export interface ProviderGateway {
  /** http://host:port of the ops listener (/metrics, /healthz); undefined without METRICS_PORT. */
  readonly opsUrl: string | undefined;
  /** The gateway's series; the accounting code records costs and limit rejections here. */
  readonly metrics: ProviderGatewayMetrics;
  inFlight(): number;
  stop(): Promise<void>;
}

export async function startProviderGateway(config: ProviderGatewayConfig, overrides: ProviderGatewayOverrides = {}): Promise<ProviderGateway> {
  const log = overrides.log ?? createLogger({ service: "provider-gateway", level: config.logLevel, debugContent: config.logDebugContent });
  const adapters = bindRoutes(config.routes, log);
  const nc = overrides.nc ?? (await connectNats(config.natsUrl, "provider-gateway", log));
  const registry = createMetricsRegistry("provider-gateway", config.metrics);
  const metrics = createProviderGatewayMetrics(registry);
  let ops;
  try {
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => !nc.isClosed() });
  } catch (err) {
    if (overrides.nc === undefined) await nc.close();
    throw err;
  }
  const server = serveModelCalls({
    nc,
    names: busNames(config.busPrefix),
    adapters,
    log,
    keepaliveMs: config.keepaliveMs,
    callerProbeMs: config.callerProbeMs,
    maxRetryAfterMs: config.maxRetryAfterMs,
    accounting: overrides.accounting ?? passThroughAccounting,
    metrics,
    ...(overrides.backoff === undefined ? {} : { backoff: overrides.backoff }),
  });
  // Make sure the subscription is registered with the server before callers are told we are up.
  await nc.flush();
  log.info({ routes: [...adapters.values()].map((a) => ({ id: a.route.id, kind: a.route.kind, provider: a.route.providerId })) }, "provider routes ready");
  return {
    opsUrl: ops.url,
    metrics,
    inFlight: () => server.inFlight(),
    async stop() {
      await server.stop();
      if (overrides.nc === undefined) await nc.drain();
      await ops.stop();
    },
  };
}
