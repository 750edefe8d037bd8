/**
 * The service registry: its text parses as Prometheus text (read by the strict
 * reader of @byok/test-support/prometheus-text), every sample carries the
 * service label, no process metrics without the ops listener (with it:
 * ops-server.int.test.ts; they start observers that outlive a unit test).
 * METRICS_PORT: unset/empty = off, 0 = any free port.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Counter, createMetricsRegistry, Gauge, Histogram, metricsConfigFrom, metricsEnvSchema } from "./metrics.ts";
import { parseMetricsText } from "@byok/test-support/prometheus-text";

describe("createMetricsRegistry", () => {
  it("serves parseable text with the service label on every sample, series included", async () => {
    const registry = createMetricsRegistry("run-worker", { host: "127.0.0.1", port: undefined });
    const runs = new Counter({ name: "byok_test_runs_total", help: "Runs.", labelNames: ["outcome"], registers: [registry] });
    const active = new Gauge({ name: "byok_test_active_runs", help: "Active runs.", registers: [registry] });
    const took = new Histogram({ name: "byok_test_duration_seconds", help: "How long.", buckets: [0.1, 1], registers: [registry] });
    runs.inc({ outcome: "completed" });
    runs.inc({ outcome: "completed" });
    active.set(3);
    took.observe(0.5);
    took.observe(2);

    const text = parseMetricsText(await registry.metrics());
    expect(text.value("byok_test_runs_total", { outcome: "completed", service: "run-worker" })).toBe(2);
    expect(text.value("byok_test_active_runs")).toBe(3);
    expect(text.histogramCount("byok_test_duration_seconds", { service: "run-worker" })).toBe(2);
    expect(text.value("byok_test_duration_seconds_sum")).toBe(2.5);
    expect(text.samples("byok_test_duration_seconds_bucket").map((s) => [s.labels["le"], s.value])).toEqual([
      ["0.1", 0],
      ["1", 1],
      ["+Inf", 2],
    ]);
    for (const family of text.families) {
      for (const sample of family.samples) expect(sample.labels["service"], family.name).toBe("run-worker");
    }
  });

  it("has no process metrics when the ops listener is off", async () => {
    const registry = createMetricsRegistry("store", { host: "127.0.0.1", port: undefined });
    new Counter({ name: "byok_test_ops_total", help: "Ops.", registers: [registry] }).inc();
    const text = parseMetricsText(await registry.metrics());
    expect(text.families.map((f) => f.name)).toEqual(["byok_test_ops_total"]);
  });

  it("keeps two instances of one service apart", async () => {
    const a = createMetricsRegistry("run-worker", { host: "127.0.0.1", port: undefined });
    const b = createMetricsRegistry("run-worker", { host: "127.0.0.1", port: undefined });
    new Counter({ name: "byok_test_runs_total", help: "Runs.", registers: [a] }).inc(5);
    new Counter({ name: "byok_test_runs_total", help: "Runs.", registers: [b] });
    expect(parseMetricsText(await a.metrics()).value("byok_test_runs_total")).toBe(5);
    expect(parseMetricsText(await b.metrics()).value("byok_test_runs_total")).toBe(0);
  });
});

describe("parseMetricsText", () => {
  it("reads labels with escapes, special values and timestamps", () => {
    const text = parseMetricsText(
      ["# HELP x_total What \\\\ counts.", "# TYPE x_total counter", String.raw`x_total{path="C:\\dir",msg="say \"hi\"\n"} 3 1700000000000`, "# TYPE g gauge", "g NaN", "g{a=\"1\",} -Inf", ""].join("\n"),
    );
    expect(text.samples("x_total")[0]?.labels).toEqual({ path: "C:\\dir", msg: 'say "hi"\n' });
    expect(text.value("x_total")).toBe(3);
    expect(text.family("x_total")?.help).toBe("What \\ counts.");
    expect(text.value("g", { a: "1" })).toBe(-Infinity);
  });

  it("refuses text that is not Prometheus text", () => {
    const bad = [
      "# TYPE x counter\nx{a=b} 1\n", // unquoted label value
      "# TYPE x gauge\nx one\n", // not a number
      "# TYPE x gauge\nx 1\nx 2\n", // duplicate series
      "# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx{a=\"1\"} 2\n", // x split by y
      "# TYPE x gauge\n# TYPE x counter\nx 1\n", // two TYPE lines
      "# TYPE x gauge\nx 1\n# HELP x late\n", // HELP after samples
      "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_sum 1\nh_count 2\n", // no +Inf bucket
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
      "# TYPE x wibble\nx 1\n", // unknown type
      "# TYPE x gauge\nx{a=\"1\",a=\"2\"} 1\n", // label twice
    ];
    for (const text of bad) expect(() => parseMetricsText(text), text).toThrow();
  });
});

describe("metricsEnvSchema", () => {
  const parse = (env: Record<string, string>) => metricsConfigFrom(z.object(metricsEnvSchema.shape).parse(env));

  it("turns the listener off when METRICS_PORT is unset or empty, and takes 0 as any free port", () => {
    expect(parse({})).toEqual({ host: "127.0.0.1", port: undefined });
    expect(parse({ METRICS_PORT: "" })).toEqual({ host: "127.0.0.1", port: undefined });
    expect(parse({ METRICS_PORT: "0", METRICS_HOST: "0.0.0.0" })).toEqual({ host: "0.0.0.0", port: 0 });
    expect(parse({ METRICS_PORT: "9464" }).port).toBe(9464);
    expect(() => parse({ METRICS_PORT: "70000" })).toThrow();
  });
});
