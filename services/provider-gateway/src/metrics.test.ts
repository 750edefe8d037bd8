/**
 * The gateway's model-call series on a fake clock: time to first token runs
 * from the request to the first content event, gateway-added counts only the
 * gateway's own two stretches (before the first upstream request, and from the
 * chunk that carried the first content to its event); calls and tokens come
 * from the CallMetrics seam (tokens only from reported usage fields); the
 * accounting series exist at zero.
 */
import { describe, expect, it } from "vitest";
import { ModelFailureKind, StopReason } from "@byok/contracts";
import { createMetricsRegistry } from "@byok/platform";
import { parseMetricsText } from "@byok/test-support/prometheus-text";
import { createProviderGatewayMetrics, REJECTED_LIMITS } from "./metrics.ts";

function setup() {
  let clock = 0;
  const registry = createMetricsRegistry("provider-gateway", { host: "127.0.0.1", port: undefined });
  const metrics = createProviderGatewayMetrics(registry, () => clock);
  return { metrics, at: (ms: number) => (clock = ms), read: async () => parseMetricsText(await registry.metrics()) };
}

describe("model call series", () => {
  it("times the first token and the gateway's share of it", async () => {
    const { metrics, at, read } = setup();
    const call = metrics.modelCall("team-gpt", 1_000);
    at(1_002); // 2 ms to build and send the request
    call.requestSent();
    at(1_900);
    call.requestSent(); // a retry: the first attempt counts
    at(2_400);
    call.bodyChunk(); // role-only chunk: no content yet
    call.published({ case: "start", value: { providerKind: "openai-chat", routeId: "team-gpt", upstreamModel: "gpt" } });
    at(3_000);
    call.bodyChunk(); // the chunk with the first text
    at(3_001);
    call.published({ case: "textStart", value: { index: 0 } });
    call.published({ case: "textDelta", value: { index: 0, text: "Hi" } });
    at(3_500);
    call.bodyChunk();
    call.published({ case: "textDelta", value: { index: 0, text: " there" } });
    call.published({ case: "done", value: { reason: StopReason.STOP } });

    const text = await read();
    const model = { model: "team-gpt", service: "provider-gateway" };
    expect(text.histogramCount("byok_model_call_time_to_first_token_seconds", model)).toBe(1);
    expect(text.value("byok_model_call_time_to_first_token_seconds_sum", model)).toBeCloseTo(2.001, 6);
    expect(text.histogramCount("byok_model_call_gateway_added_seconds", model)).toBe(1);
    expect(text.value("byok_model_call_gateway_added_seconds_sum", model)).toBeCloseTo(0.003, 6);
  });

  it("has no first-token observation for a call that streamed nothing", async () => {
    const { metrics, read } = setup();
    const call = metrics.modelCall("team-gpt", 0);
    call.requestSent();
    call.published({ case: "failure", value: { kind: ModelFailureKind.RATE_LIMITED, message: "slow down" } });
    expect((await read()).histogramCount("byok_model_call_time_to_first_token_seconds")).toBeUndefined();
  });

  it("counts ended calls by outcome and client kind, and only the token kinds the provider reported", async () => {
    const { metrics, read } = setup();
    const started = { clientKind: "cursor", routeId: "team-gpt", path: "nats" } as const;
    metrics.callEnded({ ...started, outcome: "ok", durationMs: 900, firstByteMs: 300, usage: { inputTokens: 120, outputTokens: 7, cacheReadTokens: 100 } });
    metrics.callEnded({ ...started, outcome: "ok", durationMs: 900, firstByteMs: 300, usage: { inputTokens: 30, outputTokens: 3 } });
    metrics.callEnded({ ...started, outcome: "RATE_LIMITED", durationMs: 20, firstByteMs: undefined, usage: undefined });
    metrics.callEnded({ clientKind: "openai-api", routeId: "team-gpt", path: "same-shape", outcome: "http_429", durationMs: 1, firstByteMs: 1, usage: undefined });
    const text = await read();
    const model = { model: "team-gpt" };
    expect(text.value("byok_model_calls_total", { ...model, client_kind: "cursor", outcome: "ok" })).toBe(2);
    expect(text.value("byok_model_calls_total", { ...model, client_kind: "cursor", outcome: "rate_limited" })).toBe(1);
    expect(text.value("byok_model_calls_total", { ...model, client_kind: "openai-api", outcome: "http_429" })).toBe(1);
    expect(text.value("byok_model_tokens_total", { ...model, kind: "input" })).toBe(150);
    expect(text.value("byok_model_tokens_total", { ...model, kind: "output" })).toBe(10);
    expect(text.value("byok_model_tokens_total", { ...model, kind: "cache_read" })).toBe(100);
    expect(text.samples("byok_model_tokens_total", { kind: "reasoning" })).toEqual([]);
  });
});

describe("accounting series", () => {
  it("start at zero for every limit and take costs and rejections from the accounting code", async () => {
    const { metrics, read } = setup();
    let text = await read();
    for (const limit of REJECTED_LIMITS) expect(text.value("byok_limit_rejections_total", { limit }), limit).toBe(0);
    expect(text.family("byok_model_cost_usd_total")?.type).toBe("counter");
    expect(text.family("byok_model_cost_unknown_calls_total")?.type).toBe("counter");

    metrics.recordModelCost("team-gpt", "default", { kind: "known", usd: 0.25 });
    metrics.recordModelCost("team-gpt", "default", { kind: "known", usd: 0.5 });
    metrics.recordModelCost("team-gpt", "default", { kind: "unknown" });
    metrics.recordLimitRejection("team_budget");
    metrics.recordLimitRejection("a-limit-we-do-not-know");
    text = await read();
    expect(text.value("byok_model_cost_usd_total", { model: "team-gpt", team: "default" })).toBe(0.75);
    expect(text.value("byok_model_cost_unknown_calls_total", { model: "team-gpt", team: "default" })).toBe(1);
    expect(text.value("byok_limit_rejections_total", { limit: "team_budget" })).toBe(1);
    expect(text.value("byok_limit_rejections_total", { limit: "other" })).toBe(1);
  });

  it("counts a model id outside the configured routes as other", async () => {
    let clock = 0;
    const registry = createMetricsRegistry("provider-gateway", { host: "127.0.0.1", port: undefined });
    const metrics = createProviderGatewayMetrics(registry, () => clock, new Set(["team-gpt"]));
    for (const routeId of ["team-gpt", "made-up-1", "made-up-2"]) {
      const call = metrics.modelCall(routeId, 0);
      call.requestSent();
      clock += 5;
      call.contentSent();
      metrics.callEnded({ clientKind: "openai-api", routeId, path: "same-shape", outcome: "ok", durationMs: 5, firstByteMs: 5, usage: { inputTokens: 3 } });
      metrics.recordModelCost(routeId, "team-1", { kind: "known", usd: 0.5 });
    }
    const text = parseMetricsText(await registry.metrics());
    const calls = { service: "provider-gateway", client_kind: "openai-api", outcome: "ok" };
    expect(text.value("byok_model_calls_total", { ...calls, model: "team-gpt" })).toBe(1);
    expect(text.value("byok_model_calls_total", { ...calls, model: "other" })).toBe(2);
    expect(text.value("byok_model_tokens_total", { service: "provider-gateway", model: "other", kind: "input" })).toBe(6);
    expect(text.value("byok_model_cost_usd_total", { service: "provider-gateway", model: "other", team: "team-1" })).toBe(1);
    expect(text.histogramCount("byok_model_call_time_to_first_token_seconds", { service: "provider-gateway", model: "other" })).toBe(2);
    expect(await registry.metrics()).not.toMatch(/made-up/);
  });
});
