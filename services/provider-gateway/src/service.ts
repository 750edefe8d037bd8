/**
 * The provider gateway: binds every configured route to its endpoint adapter
 * (SDK clients with the keys, which never leave this process) and serves
 * model calls on the bus. `startProviderGateway` runs the real service
 * in-process (main.ts, the supervisor and tests). Every call, from the bus or
 * the HTTP front, passes the one call accounting: StoreAccounting (budgets,
 * limits and the ledger through the store, its costs into the metrics) unless
 * ACCOUNTING=off or the caller hands in its own.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { busNames } from "@byok/contracts";
import { StoreClient } from "@byok/store-client";
import { PICO_PER_USD, connectNats, createLogger, createMetricsRegistry, natsToolSetStore, startOpsServer, ToolSets, type Logger, type NatsConnection } from "@byok/platform";
import { passThroughAccounting, type CallAccounting } from "./accounting/call-accounting.ts";
import { StoreAccounting } from "./accounting/store-accounting.ts";
import { bindRoutes } from "./adapters/index.ts";
import type { ProviderGatewayConfig } from "./config.ts";
import { startInboundServer, type InboundServer } from "./inbound/inbound-server.ts";
import { cachedMemberKeys, storeMemberKeys, type MemberKeys } from "./inbound/member-keys.ts";
import { natsReplayStore, type ReplayStore } from "./inbound/replay-store.ts";
import { serveModelCalls } from "./invoke-server.ts";
import { createProviderGatewayMetrics, type ProviderGatewayMetrics } from "./metrics.ts";
import type { ModelCallOptions } from "./model-call.ts";

export interface ProviderGatewayOverrides {
  readonly log?: Logger;
  /** Use this connection instead of opening one (it is not closed on stop). */
  readonly nc?: NatsConnection;
  readonly backoff?: ModelCallOptions["backoff"];
  /** Budgets, limits and ledger (default: StoreAccounting, or pass-through with ACCOUNTING=off). */
  readonly accounting?: CallAccounting;
  /** HTTP front: member keys (default: the store's member.verify over the bus, cached). */
  readonly memberKeys?: MemberKeys;
  /** HTTP front: replay state store (default: the NATS KV bucket). */
  readonly replay?: ReplayStore;
}

export interface ProviderGateway {
  /** http://host:port of the ops listener (/metrics, /healthz); undefined without METRICS_PORT. */
  readonly opsUrl: string | undefined;
  /** Base URL of the OpenAI/Anthropic-compatible HTTP front (http://host:port), when it is on. */
  readonly inboundUrl: string | undefined;
  /** The gateway's series; the accounting code records costs and limit rejections here. */
  readonly metrics: ProviderGatewayMetrics;
  inFlight(): number;
  stop(): Promise<void>;
}

export async function startProviderGateway(config: ProviderGatewayConfig, overrides: ProviderGatewayOverrides = {}): Promise<ProviderGateway> {
  const log = overrides.log ?? createLogger({ service: "provider-gateway", level: config.logLevel, debugContent: config.logDebugContent });
  const adapters = bindRoutes(config.routes, log);
  const nc = overrides.nc ?? (await connectNats(config.natsUrl, "provider-gateway", log));
  const names = busNames(config.busPrefix);
  const store = new StoreClient(nc, names, { timeoutMs: config.storeTimeoutMs });
  const registry = createMetricsRegistry("provider-gateway", config.metrics);
  const metrics = createProviderGatewayMetrics(registry, undefined, new Set(config.routes.keys()));
  const storeAccounting =
    overrides.accounting !== undefined || config.accounting === undefined
      ? undefined
      : new StoreAccounting({
          store,
          models: config.accounting.models,
          holder: config.accounting.holder ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`,
          policyTtlMs: config.accounting.policyTtlMs,
          leaseTtlMs: config.accounting.leaseTtlMs,
          leaseIdleMs: config.accounting.leaseIdleMs,
          leaseCalls: config.accounting.leaseCalls,
          ledgerLingerMs: config.accounting.ledgerLingerMs,
          log: log.child({ component: "accounting" }),
          observer: {
            // A Prometheus counter takes floats: the exact amount stays in the ledger.
            costRecorded: (model, team, cost) => metrics.recordModelCost(model, team, cost.kind === "known" ? { kind: "known", usd: Number(cost.pico) / Number(PICO_PER_USD) } : { kind: "unknown" }),
          },
        });
  const accounting = overrides.accounting ?? storeAccounting ?? passThroughAccounting;
  let ops;
  try {
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => !nc.isClosed(), nats: () => nc });
  } catch (err) {
    if (overrides.nc === undefined) await nc.close();
    throw err;
  }
  const server = serveModelCalls({
    nc,
    names,
    adapters,
    log,
    keepaliveMs: config.keepaliveMs,
    callerProbeMs: config.callerProbeMs,
    maxRetryAfterMs: config.maxRetryAfterMs,
    deltaCoalesceMs: config.deltaCoalesceMs,
    accounting,
    toolSets: new ToolSets(natsToolSetStore(nc, names), log.child({ component: "tool-sets" })),
    metrics,
    ...(overrides.backoff === undefined ? {} : { backoff: overrides.backoff }),
  });
  // Make sure the subscription is registered with the server before callers are told we are up.
  await nc.flush();
  let inbound: InboundServer | undefined;
  if (config.inbound !== undefined) {
    inbound = await startInboundServer({
      config: config.inbound,
      adapters,
      memberKeys: overrides.memberKeys ?? cachedMemberKeys(storeMemberKeys(store), config.inbound.keyCacheMs),
      accounting,
      metrics,
      replay: overrides.replay ?? (await natsReplayStore(nc, names.inboundReplayBucket, config.inbound.replayTtlMs, log)),
      log: log.child({ component: "inbound" }),
      maxRetryAfterMs: config.maxRetryAfterMs,
      backoff: overrides.backoff,
    });
  }
  log.info({ routes: [...adapters.values()].map((a) => ({ id: a.route.id, kind: a.route.kind, provider: a.route.providerId })) }, "provider routes ready");
  return {
    opsUrl: ops.url,
    inboundUrl: inbound?.url,
    metrics,
    inFlight: () => server.inFlight() + (inbound?.inFlight() ?? 0),
    async stop() {
      await inbound?.stop();
      await server.stop();
      // Every call has settled: write the ledger backlog and return the leases while the bus is still up.
      await storeAccounting?.close();
      if (overrides.nc === undefined) await nc.drain();
      await ops.stop();
    },
  };
}
