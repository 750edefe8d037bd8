/**
 * The provider gateway: binds every configured route to its endpoint adapter
 * (SDK clients with the keys, which never leave this process) and serves
 * model calls on the bus. `startProviderGateway` runs the real service
 * in-process (main.ts, the supervisor and tests).
 */
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, type Logger, type NatsConnection } from "@byok/platform";
import { passThroughAccounting, type CallAccounting } from "./accounting/call-accounting.ts";
import { noCallMetrics, type CallMetrics } from "./accounting/call-metrics.ts";
import { bindRoutes } from "./adapters/index.ts";
import type { ProviderGatewayConfig } from "./config.ts";
import { serveModelCalls } from "./invoke-server.ts";
import type { ModelCallOptions } from "./model-call.ts";

export interface ProviderGatewayOverrides {
  readonly log?: Logger;
  /** Use this connection instead of opening one (it is not closed on stop). */
  readonly nc?: NatsConnection;
  readonly backoff?: ModelCallOptions["backoff"];
  /** Budgets, limits and ledger (default: pass-through, admits everything). */
  readonly accounting?: CallAccounting;
  readonly metrics?: CallMetrics;
}

export interface ProviderGateway {
  inFlight(): number;
  stop(): Promise<void>;
}

export async function startProviderGateway(config: ProviderGatewayConfig, overrides: ProviderGatewayOverrides = {}): Promise<ProviderGateway> {
  const log = overrides.log ?? createLogger({ service: "provider-gateway", level: config.logLevel, debugContent: config.logDebugContent });
  const adapters = bindRoutes(config.routes, log);
  const nc = overrides.nc ?? (await connectNats(config.natsUrl, "provider-gateway", log));
  const server = serveModelCalls({
    nc,
    names: busNames(config.busPrefix),
    adapters,
    log,
    keepaliveMs: config.keepaliveMs,
    callerProbeMs: config.callerProbeMs,
    maxRetryAfterMs: config.maxRetryAfterMs,
    accounting: overrides.accounting ?? passThroughAccounting,
    metrics: overrides.metrics ?? noCallMetrics,
    ...(overrides.backoff === undefined ? {} : { backoff: overrides.backoff }),
  });
  // Make sure the subscription is registered with the server before callers are told we are up.
  await nc.flush();
  log.info({ routes: [...adapters.values()].map((a) => ({ id: a.route.id, kind: a.route.kind, provider: a.route.providerId })) }, "provider routes ready");
  return {
    inFlight: () => server.inFlight(),
    async stop() {
      await server.stop();
      if (overrides.nc === undefined) await nc.drain();
    },
  };
}
