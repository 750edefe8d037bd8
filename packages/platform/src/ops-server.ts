/**
 * The ops listener of a service: `GET /metrics` (the service's registry in the
 * Prometheus text format) and `GET /healthz` (200 "ok", or 503 when the
 * service's health check says so). It is its own HTTP server on
 * METRICS_HOST:METRICS_PORT, separate from any port that faces members or
 * clients, so metrics never leave the operators' network by accident.
 */
import { createServer } from "node:http";
import type { Logger } from "pino";
import { Counter, Gauge, type Registry } from "prom-client";
import type { NatsConnection } from "@nats-io/transport-node";
import { closeOnce, listen, urlHost } from "./listen.ts";
import type { MetricsConfig } from "./metrics.ts";

export interface OpsServerOptions {
  readonly config: MetricsConfig;
  readonly registry: Registry;
  readonly log: Logger;
  /** false: /healthz answers 503 (default: always healthy while the process serves). */
  readonly healthy?: () => boolean;
  /** The service's NATS connection (undefined while it has none): its message and byte counts are served as metrics. */
  readonly nats?: () => NatsConnection | undefined;
}

export interface OpsServer {
  /** http://host:port of the listener; undefined when METRICS_PORT is unset. */
  readonly url: string | undefined;
  stop(): Promise<void>;
}

const OFF: OpsServer = { url: undefined, stop: () => Promise.resolve() };

/** Starts the listener (a bind error rejects); with METRICS_PORT unset it starts nothing. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { config, registry, log } = options;
  if (config.port === undefined) return OFF;
  if (options.nats !== undefined) registerNatsClientMetrics(registry, options.nats);
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === "/healthz") {
      const ok = options.healthy?.() ?? true;
      res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(ok ? "ok\n" : "unhealthy\n");
      return;
    }
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (err: unknown) => {
        log.error({ err }, "collecting metrics failed");
        res.writeHead(500, { "content-type": "text/plain" }).end("collecting metrics failed\n");
      },
    );
  });
  const port = await listen(server, config.port, config.host);
  log.info({ host: config.host, port }, "ops listener (metrics, health) listening");
  return { url: `http://${urlHost(config.host)}:${port}`, stop: closeOnce(server) };
}

/**
 * byok_nats_client_messages_total / byok_nats_client_bytes_total{direction="in"|"out"}:
 * the connection's own counters (nc.stats()), read at scrape time. Messages
 * per turn on the bus are the difference of two scrapes.
 * byok_nats_client_subscriptions: subscriptions open on the connection now
 * (the client keeps no public count; read from its protocol handler, absent
 * if the library changed shape). Per-run subscriptions that outlive their
 * runs show here as a line that only rises.
 */
function registerNatsClientMetrics(registry: Registry, nats: () => NatsConnection | undefined): void {
  const counter = (name: string, help: string, field: "Msgs" | "Bytes"): void => {
    new Counter({
      name,
      help,
      labelNames: ["direction"],
      registers: [registry],
      collect() {
        const stats = nats()?.stats();
        if (stats === undefined) return;
        this.reset();
        this.inc({ direction: "in" }, stats[`in${field}`]);
        this.inc({ direction: "out" }, stats[`out${field}`]);
      },
    });
  };
  counter("byok_nats_client_messages_total", "Messages this service's NATS connection received (in) and published (out).", "Msgs");
  counter("byok_nats_client_bytes_total", "Payload bytes this service's NATS connection received (in) and published (out).", "Bytes");
  new Gauge({
    name: "byok_nats_client_subscriptions",
    help: "Subscriptions open on this service's NATS connection.",
    registers: [registry],
    collect() {
      const count = openSubscriptions(nats());
      if (count !== undefined) this.set(count);
    },
  });
}

function openSubscriptions(nc: NatsConnection | undefined): number | undefined {
  const subscriptions = (nc as unknown as { protocol?: { subscriptions?: { size?: () => number } } } | undefined)?.protocol?.subscriptions;
  return typeof subscriptions?.size === "function" ? subscriptions.size() : undefined;
}
