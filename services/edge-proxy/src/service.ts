/**
 * The edge proxy as a startable unit: team CA, member authentication, the
 * CONNECT listener (interception for Cursor hosts, tunnels for the rest) and
 * the forwarding targets. Tests and the supervisor run it in-process.
 */
import http from "node:http";
import https from "node:https";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { rootCertificates } from "node:tls";
import type { Duplex } from "node:stream";
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, createMetricsRegistry, startOpsServer, type Logger, type NatsConnection, type OpsServer } from "@byok/platform";
import { StoreClient } from "@byok/store-client";
import { CA_CERT_FILE, loadOrCreateCa } from "./ca.ts";
import type { EdgeProxyServiceConfig } from "./config.ts";
import { createConnectHandler } from "./connect-handler.ts";
import { Interceptor } from "./intercept.ts";
import { LeafCertificates } from "./leaf-certs.ts";
import { MemberAuthenticator } from "./member-auth.ts";
import { memberDirectory, type MemberDirectory } from "./member-store.ts";
import { createEdgeProxyMetrics } from "./metrics.ts";
import type { TunnelInfo } from "./proxy-context.ts";
import { LOCAL_ROUTES, natsRouteExchange } from "./route-exchange.ts";
import { RouteTable } from "./route-table.ts";
import type { Origin } from "./upstream.ts";

export interface EdgeProxyDeps {
  log?: Logger;
  /** Member key verification; default: the store over NATS. */
  members?: MemberDirectory;
}

export interface EdgeProxy {
  /** The port the proxy listens on. */
  readonly port: number;
  /** Proxy URL without credentials, e.g. http://127.0.0.1:8080. */
  readonly url: string;
  /** The team CA certificate members install (also served at GET /ca.crt). */
  readonly caCertPem: string;
  /** Absolute path of the team CA certificate file. */
  readonly caCertFile: string;
  /** http://host:port of the ops listener (/metrics, /healthz), never the proxy port; undefined without METRICS_PORT. */
  readonly opsUrl: string | undefined;
  stop(): Promise<void>;
}

function originAgent(url: URL, ca: string[] | undefined): http.Agent {
  const common = { keepAlive: true, maxFreeSockets: 64 };
  return url.protocol === "https:" ? new https.Agent({ ...common, ...(ca ? { ca } : {}) }) : new http.Agent(common);
}

export async function startEdgeProxy(config: EdgeProxyServiceConfig, deps: EdgeProxyDeps = {}): Promise<EdgeProxy> {
  const log = deps.log ?? createLogger({ service: "edge-proxy", level: config.logLevel, debugContent: config.logDebugContent });
  const byokModelIds = new Set(config.byokModelIds);
  const { ca } = await loadOrCreateCa(config.caDir, config.interceptDomains, log);

  let nc: NatsConnection | undefined;
  let members = deps.members;
  if (!members) {
    nc = await connectNats(config.natsUrl, "edge-proxy", log);
    members = memberDirectory(new StoreClient(nc, busNames(config.busPrefix), { timeoutMs: config.storeTimeoutMs }));
  }

  const trusted = config.upstreamCaFile ? [...rootCertificates, readFileSync(config.upstreamCaFile, "utf8")] : undefined;
  const upstreamHttps = new https.Agent({ keepAlive: true, maxFreeSockets: 64, ...(trusted ? { ca: trusted } : {}) });
  const fixedUpstream: Origin | undefined = config.upstreamOrigin
    ? { url: config.upstreamOrigin, agent: config.upstreamOrigin.protocol === "https:" ? upstreamHttps : originAgent(config.upstreamOrigin, undefined) }
    : undefined;
  const upstreamOrigins = new Map<string, Origin>();
  const upstreamFor = (tunnel: TunnelInfo): Origin => {
    if (fixedUpstream) return fixedUpstream;
    const key = `${tunnel.host}:${tunnel.port}`;
    let origin = upstreamOrigins.get(key);
    if (!origin) {
      origin = { url: new URL(tunnel.port === 443 ? `https://${tunnel.host}` : `https://${tunnel.host}:${tunnel.port}`), agent: upstreamHttps };
      upstreamOrigins.set(key, origin);
    }
    return origin;
  };
  const adapter: Origin = { url: config.adapterOrigin, agent: originAgent(config.adapterOrigin, undefined) };

  const registry = createMetricsRegistry("edge-proxy", config.metrics);
  const metrics = createEdgeProxyMetrics(registry);
  const routes = new RouteTable({ ttlMs: config.routeTtlMs });
  const exchange = nc ? natsRouteExchange(nc, busNames(config.busPrefix), routes, log) : LOCAL_ROUTES;
  const interceptor = new Interceptor(
    {
      adapter,
      upstreamFor,
      routes,
      exchange,
      byokModelIds,
      routeWaitMs: config.routeWaitMs,
      upstreamUnaryTimeoutMs: config.upstreamUnaryTimeoutMs,
      connectTimeoutMs: config.connectTimeoutMs,
      metrics,
      log,
    },
    new LeafCertificates(ca, config.interceptDomains),
  );
  const sockets = new Set<Duplex>();
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    } else if (req.method === "GET" && req.url === "/ca.crt") {
      res.writeHead(200, { "content-type": "application/x-pem-file" }).end(ca.certPem);
    } else {
      const message = /^https?:\/\//i.test(req.url ?? "") ? "this proxy only supports CONNECT (https) requests\n" : "not found\n";
      res.writeHead(/^https?:\/\//i.test(req.url ?? "") ? 501 : 404, { "content-type": "text/plain" }).end(message);
    }
  });
  server.on(
    "connect",
    createConnectHandler({
      authenticator: new MemberAuthenticator(members, { cacheMs: config.memberCacheMs }),
      interceptor,
      interceptDomains: config.interceptDomains,
      connectTimeoutMs: config.connectTimeoutMs,
      metrics,
      log,
      sockets,
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  let ops: OpsServer;
  try {
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => nc === undefined || !nc.isClosed(), nats: () => nc });
  } catch (err) {
    server.close();
    interceptor.close();
    if (nc) await nc.close();
    throw err;
  }
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const hostForUrl = config.host.includes(":") ? `[${config.host}]` : config.host;
  log.info({ host: config.host, port, intercept: config.interceptDomains, adapter: adapter.url.origin, upstream: fixedUpstream?.url.origin ?? "requested host", byokModels: byokModelIds.size }, "edge proxy listening");

  return {
    port,
    url: `http://${hostForUrl}:${port}`,
    caCertPem: ca.certPem,
    caCertFile: resolve(join(config.caDir, CA_CERT_FILE)),
    opsUrl: ops.url,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      interceptor.close();
      exchange.close();
      upstreamHttps.destroy();
      adapter.agent.destroy();
      fixedUpstream?.agent.destroy();
      await closed;
      if (nc) await nc.close();
      await ops.stop();
    },
  };
}
