/**
 * The ops listener over real HTTP on loopback: /metrics in the Prometheus text
 * format with its content type, /healthz following the health check, nothing
 * else; no listener at all when METRICS_PORT is unset.
 */
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { NATS_URL } from "@byok/test-support/infra";
import { silentLogger } from "./logger.ts";
import { Counter, createMetricsRegistry } from "./metrics.ts";
import { startOpsServer, type OpsServer } from "./ops-server.ts";
import { parseMetricsText } from "@byok/test-support/prometheus-text";

describe("startOpsServer", () => {
  let server: OpsServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it("serves /metrics and /healthz on a free port", async () => {
    const config = { host: "127.0.0.1", port: 0 };
    const registry = createMetricsRegistry("edge-proxy", config);
    new Counter({ name: "byok_test_requests_total", help: "Requests.", labelNames: ["route_class"], registers: [registry] }).inc({ route_class: "byok" });
    let healthy = true;
    server = await startOpsServer({ config, registry, log: silentLogger(), healthy: () => healthy });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = parseMetricsText(await metrics.text());
    expect(text.value("byok_test_requests_total", { route_class: "byok", service: "edge-proxy" })).toBe(1);
    // Process metrics under their standard names, with the listener on.
    expect(text.family("process_cpu_seconds_total")?.type).toBe("counter");
    expect(text.family("nodejs_eventloop_lag_seconds")?.type).toBe("gauge");
    expect(text.family("process_resident_memory_bytes")).toBeDefined();

    expect(await (await fetch(`${server.url}/healthz`)).text()).toBe("ok\n");
    healthy = false;
    expect((await fetch(`${server.url}/healthz`)).status).toBe(503);
    expect((await fetch(`${server.url}/`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { method: "POST" })).status).toBe(405);
  });

  it("serves the NATS connection's message and byte counts and its open subscriptions", async () => {
    const config = { host: "127.0.0.1", port: 0 };
    const nc = await connect({ servers: NATS_URL });
    try {
      server = await startOpsServer({ config, registry: createMetricsRegistry("run-worker", config), log: silentLogger(), nats: () => nc });
      const scrape = async () => parseMetricsText(await (await fetch(`${server!.url}/metrics`)).text());
      const before = (await scrape()).value("byok_nats_client_messages_total", { direction: "out", service: "run-worker" }) ?? Number.NaN;
      for (let i = 0; i < 3; i++) nc.publish(`ops-test.${i}`, "abcd");
      await nc.flush();
      const after = await scrape();
      expect(after.value("byok_nats_client_messages_total", { direction: "out", service: "run-worker" })).toBe(before + 3);
      expect(after.value("byok_nats_client_bytes_total", { direction: "out", service: "run-worker" })).toBeGreaterThanOrEqual(12);
      expect(after.family("byok_nats_client_messages_total")?.type).toBe("counter");
      const subscriptions = after.value("byok_nats_client_subscriptions", { service: "run-worker" }) ?? Number.NaN;
      const sub = nc.subscribe("ops-test.sub");
      expect((await scrape()).value("byok_nats_client_subscriptions", { service: "run-worker" })).toBe(subscriptions + 1);
      sub.unsubscribe();
      expect((await scrape()).value("byok_nats_client_subscriptions", { service: "run-worker" })).toBe(subscriptions);
    } finally {
      await nc.close();
    }
  });

  it("starts nothing when METRICS_PORT is unset", async () => {
    const config = { host: "127.0.0.1", port: undefined };
    server = await startOpsServer({ config, registry: createMetricsRegistry("store", config), log: silentLogger() });
    expect(server.url).toBeUndefined();
  });

  it("fails to start on a port in use", async () => {
    const config = { host: "127.0.0.1", port: 0 };
    server = await startOpsServer({ config, registry: createMetricsRegistry("store", config), log: silentLogger() });
    const port = Number(new URL(server.url!).port);
    await expect(startOpsServer({ config: { ...config, port }, registry: createMetricsRegistry("store", config), log: silentLogger() })).rejects.toThrow(/EADDRINUSE/);
  });
});
