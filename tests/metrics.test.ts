/**
 * Every service's /metrics after real traffic: the whole gateway in-process
 * (edge proxy in front) with each service's ops listener on a free port, one
 * refused CONNECT, one text turn and one turn with a tool round. Each scrape
 * must be valid Prometheus text and show the named series with the samples
 * that traffic produced; /healthz answers on every ops listener.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseMetricsText, type MetricsText } from "@byok/test-support/prometheus-text";
import { DEFAULT_TEAM_ID } from "@byok/contracts";
import type { tools } from "@byok/cursor-protocol";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import type { ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";
import { waitFor } from "@byok/test-support/infra";
import { enqueueChat, execArgs, finishedOk, readSuccess } from "./tools-support.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const textUsage = readChatFixture(TEXT_FIXTURE).usage!;
const FILE = "/home/dev/project/README.md";
const DASHBOARD = new URL("../infra/grafana/dashboards/byok-gateway.json", import.meta.url);

async function scrape(url: string | undefined, service: string): Promise<MetricsText> {
  if (url === undefined) throw new Error(`${service} has no ops listener`);
  const health = await fetch(`${url}/healthz`);
  expect(health.status, `${service} /healthz`).toBe(200);
  const res = await fetch(`${url}/metrics`);
  expect(res.status, `${service} /metrics`).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = parseMetricsText(await res.text());
  for (const family of text.families) {
    for (const sample of family.samples) expect(sample.labels["service"], `${service}: ${sample.name}`).toBe(service);
  }
  expect(text.family("process_cpu_seconds_total"), `${service}: process metrics`).toBeDefined();
  return text;
}

/** A CONNECT with a key the store does not know; resolves with the proxy's status. */
function connectWithBadKey(proxyUrl: string): Promise<number> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: proxy.hostname,
      port: proxy.port,
      method: "CONNECT",
      path: "api2.cursor.sh:443",
      headers: { "proxy-authorization": `Basic ${Buffer.from("mallory:not-a-gateway-key").toString("base64")}` },
    });
    req.once("connect", (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.once("error", reject);
    req.end();
  });
}

describe("metrics of every service after a text turn and a tool round", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway({ edgeProxy: true, opsListeners: true });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("serves the named series with the samples the traffic produced", async () => {
    const edge = gw.edge!;
    expect(await connectWithBadKey(edge.url)).toBe(407);
    const alice = await edge.createMember("alice");
    const client = edge.client({ name: "alice", key: alice.key });

    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const text = await finishedOk(client.conversation().send("hello", { modelId: gw.modelId }));
    expect(text.violations).toEqual([]);

    enqueueChat(gw, { id: "chatcmpl-metrics-1", text: "Reading it.", calls: [{ id: "call_metrics_read", name: "Read", args: { path: FILE } }] });
    enqueueChat(gw, { id: "chatcmpl-metrics-2", text: "It says hello." });
    const round = await finishedOk(
      client.conversation().send("What does the README say?", {
        modelId: gw.modelId,
        onExec: { readArgs: (ctx: ExecContext) => ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, "hello\n")) },
      }),
    );
    expect(round.text).toBe("Reading it.It says hello.");
    const modelCalls = 3;

    // ---- run worker ----
    // A completed run's end is counted once run.finish is recorded, which may follow the client's end.
    const worker = await waitFor(async () => {
      const scraped = await scrape(gw.workers[0]!.opsUrl, "run-worker");
      return scraped.value("byok_run_worker_active_runs") === 0 && scraped;
    }, "the runs to leave the worker");
    expect(worker.value("byok_runs_total", { outcome: "completed", failure_kind: "none" })).toBe(2);
    expect(worker.value("byok_runs_total", { outcome: "failed" })).toBe(0);
    expect(worker.value("byok_runs_total", { outcome: "cancelled" })).toBe(0);
    expect(worker.histogramCount("byok_tool_round_duration_seconds", { start: "created" })).toBe(1);
    expect(worker.value("byok_run_worker_active_runs")).toBe(0);
    const consumer = { stream: gw.names.runsStream, consumer: gw.names.runWorkersConsumer };
    expect(worker.value("byok_jetstream_consumer_pending_messages", consumer)).toBe(0);
    expect(worker.value("byok_jetstream_consumer_redelivered_messages", consumer)).toBe(0);
    expect(worker.value("byok_jetstream_consumer_ack_pending_messages", consumer)).toBeGreaterThanOrEqual(0);
    expect(worker.value("byok_jetstream_consumer_waiting_pulls", consumer)).toBeGreaterThanOrEqual(0);

    // ---- provider gateway ----
    const gateway = await scrape(gw.ops.providerGateway, "provider-gateway");
    const model = { model: gw.modelId };
    expect(gateway.value("byok_model_calls_total", { ...model, client_kind: "cursor", outcome: "ok" })).toBe(modelCalls);
    expect(gateway.histogramCount("byok_model_call_time_to_first_token_seconds", model)).toBe(modelCalls);
    expect(gateway.histogramCount("byok_model_call_gateway_added_seconds", model)).toBe(modelCalls);
    const ttft = gateway.value("byok_model_call_time_to_first_token_seconds_sum", model)!;
    const added = gateway.value("byok_model_call_gateway_added_seconds_sum", model)!;
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThanOrEqual(ttft);
    expect(gateway.value("byok_model_tokens_total", { ...model, kind: "input" })).toBe(textUsage.inputTokens + 100 + 100);
    expect(gateway.value("byok_model_tokens_total", { ...model, kind: "output" })).toBe(textUsage.outputTokens + 20 + 20);
    // The harness model has no price: every call's cost is unknown (counted as such, never as $0); no rejections.
    expect(gateway.family("byok_model_cost_usd_total")?.samples).toEqual([]);
    expect(gateway.value("byok_model_cost_unknown_calls_total", { ...model, team: DEFAULT_TEAM_ID })).toBe(modelCalls);
    expect(gateway.value("byok_limit_rejections_total", { limit: "member_budget" })).toBe(0);
    expect(gateway.value("byok_limit_rejections_total")).toBe(0);

    // ---- store ----
    const store = await scrape(gw.ops.store, "store");
    expect(store.histogramCount("byok_store_operation_duration_seconds", { operation: "run.begin", outcome: "ok" })).toBe(2);
    expect(store.histogramCount("byok_store_operation_duration_seconds", { operation: "run.finish", outcome: "ok" })).toBe(2);
    expect(store.histogramCount("byok_store_operation_duration_seconds", { operation: "tool_round.create", outcome: "ok" })).toBe(1);
    expect(store.histogramCount("byok_store_operation_duration_seconds", { operation: "tool_round.commit_result", outcome: "ok" })).toBe(1);
    expect(store.histogramCount("byok_store_operation_duration_seconds")).toBeGreaterThan(6);

    // ---- cursor adapter ----
    const adapter = await scrape(gw.ops.cursorAdapter, "cursor-adapter");
    expect(adapter.value("byok_adapter_run_sse_streams_total", { end: "finished" })).toBe(2);
    expect(adapter.value("byok_adapter_run_sse_streams_total", { end: "disconnected" })).toBe(0);
    expect(adapter.value("byok_adapter_run_sse_open_streams")).toBe(0);
    expect(adapter.value("byok_adapter_active_runs")).toBe(0);
    expect(adapter.histogramCount("byok_adapter_kv_blob_round_trip_seconds", { op: "set", outcome: "ok" })).toBeGreaterThan(0);

    // ---- edge proxy ----
    const proxy = await scrape(gw.ops.edgeProxy, "edge-proxy");
    expect(proxy.value("byok_edge_proxy_auth_failures_total", { reason: "rejected" })).toBe(1);
    expect(proxy.value("byok_edge_proxy_auth_failures_total", { reason: "missing" })).toBe(0);
    // Each run: one RunSSE and its BidiAppends, all to the adapter; nothing went to Cursor.
    expect(proxy.value("byok_edge_requests_total", { route_class: "byok" })).toBeGreaterThanOrEqual(4);
    expect(proxy.value("byok_edge_requests_total", { route_class: "passthrough" })).toBe(0);

    // ---- the Grafana dashboard plots only series the services serve, and every byok_ series ----
    const served = new Set<string>();
    for (const scraped of [worker, gateway, store, adapter, proxy]) {
      for (const family of scraped.families) {
        served.add(family.name);
        for (const sample of family.samples) served.add(sample.name);
      }
    }
    const dashboard = readFileSync(DASHBOARD, "utf8");
    const plotted = new Set(dashboard.match(/\b(byok|process|nodejs)_[a-z0-9_]+/g));
    for (const name of plotted) expect(served.has(name), `dashboard series ${name}`).toBe(true);
    const families = [...served].filter((n) => n.startsWith("byok_") && [worker, gateway, store, adapter, proxy].some((t) => t.family(n)));
    for (const name of families) expect([...plotted].some((p) => p.startsWith(name)), `${name} on the dashboard`).toBe(true);
  });
});
