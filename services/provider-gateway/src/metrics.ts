/**
 * The provider gateway's series. `model` is always a route id from the
 * gateway configuration (a bounded set): given the configured ids, any other
 * value (a model id a client made up, should a caller pass one) is counted
 * as "other", so clients cannot grow the label set. No series carries a run,
 * call or member id.
 *
 * Model calls. Every call path reports through the CallMetrics seam
 * (accounting/call-metrics.ts: callStarted/callEnded), which this implements;
 * the timings come from a ModelCallObserver per call (invoke-server.ts):
 *   byok_model_calls_total{model, client_kind, outcome}         counter
 *     Calls ended (calls for a model id that is not configured are not
 *     counted): outcome ok, the failure kind (provider_error, rate_limited,
 *     over_limit, truncated, cancelled, config, ...), or http_<status> for an
 *     answer the HTTP front gave itself; client_kind cursor | acp |
 *     openai-api | anthropic-api.
 *   byok_model_call_time_to_first_token_seconds{model}          histogram
 *     Request received by the gateway -> first content event (text or
 *     thinking delta, tool call start) published to the caller. One
 *     observation per call that produced content. On the HTTP front's
 *     same-shape relay (no ModelEvents) the first body chunk passed on
 *     stands for it.
 *   byok_model_call_gateway_added_seconds{model}                histogram
 *     The part of that time spent in the gateway, observed with it:
 *       (first upstream request sent - request received)
 *     + (first content event published - arrival of the upstream body chunk
 *        that carried it).
 *     The first term is decoding, routing, the accounting admission and
 *     building the endpoint request (retries and their backoff are not in it:
 *     it ends at the first attempt); the second is SSE parsing, decoding and
 *     publishing. Waiting for the endpoint (headers, the model's first token)
 *     is not in it.
 *   byok_model_tokens_total{model, kind}                        counter
 *     Provider-reported usage only (never estimated): kind input (the whole
 *     prompt, cached parts included), output, cache_read, cache_write,
 *     reasoning. cache_* are parts of input and reasoning of output, so do
 *     not add kinds up. A field the endpoint did not report adds nothing.
 *
 * Accounting (StoreAccounting reports every settled call's cost; `team` is the team id):
 *   byok_model_cost_usd_total{model, team}                      counter
 *   byok_model_cost_unknown_calls_total{model, team}            counter
 *     Cost of each accounted model call in USD; a call whose price or usage
 *     is missing counts as unknown instead (never as 0 USD).
 *   byok_limit_rejections_total{limit}                          counter
 *     Model calls the accounting refused (admit() -> rejected), counted where
 *     the decision is applied; every limit kind starts at 0, a limit name
 *     outside REJECTED_LIMITS counts as "other".
 */
import { Counter, Histogram, secondsSince, type Registry } from "@byok/platform";
import type { CallMetrics } from "./accounting/call-metrics.ts";
import type { ModelEventBody } from "./events.ts";

/** The budgets and limits a model call can be refused by (label `limit`). */
export const REJECTED_LIMITS = ["member_budget", "team_budget", "model_budget", "requests_per_minute", "tokens_per_minute", "concurrent_runs"] as const;
export type RejectedLimit = (typeof REJECTED_LIMITS)[number];

/** A model call's cost as the ledger knows it. */
export type CallCost = { readonly kind: "known"; readonly usd: number } | { readonly kind: "unknown" };

/** What model-call.ts reports about the upstream side of one call. */
export interface UpstreamObserver {
  /** An HTTP attempt is about to be sent (only the first one counts). */
  requestSent(): void;
  /** A chunk of the streaming response body arrived. */
  bodyChunk(): void;
}

/** One model call's timings; `published` sees every ModelEvent sent to the caller. */
export interface ModelCallObserver extends UpstreamObserver {
  published(event: ModelEventBody): void;
  /** For calls without ModelEvents (the HTTP front's same-shape relay): the first body chunk passed on to the client. */
  contentSent(): void;
}

export interface ProviderGatewayMetrics extends CallMetrics {
  /** Start timing a call; `receivedAtMs` is performance.now() when its request arrived. */
  modelCall(model: string, receivedAtMs: number): ModelCallObserver;
  /** For the accounting code: the cost of one model call, once its usage is settled. */
  recordModelCost(model: string, team: string, cost: CallCost): void;
  /** A model call refused by a budget or limit (the name admit() gave; unknown names count as "other"). */
  recordLimitRejection(limit: string): void;
}

/** Request received -> first content token (upstream's own time to first token included). */
const TTFT_BUCKETS = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 13, 20, 30, 60];
/** The gateway's own share: well under a millisecond when healthy. */
const GATEWAY_ADDED_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

const TOKEN_KINDS = [
  ["inputTokens", "input"],
  ["outputTokens", "output"],
  ["cacheReadTokens", "cache_read"],
  ["cacheWriteTokens", "cache_write"],
  ["reasoningTokens", "reasoning"],
] as const;

const KNOWN_LIMITS: ReadonlySet<string> = new Set(REJECTED_LIMITS);

/** The `model` label of every model id outside the configured routes. */
export const OTHER_MODEL_LABEL = "other";

/**
 * `now` is the clock of the call timings (tests pass a fake one); `modelIds`
 * the configured route ids (undefined: labels are taken as given).
 */
export function createProviderGatewayMetrics(registry: Registry, now: () => number = () => performance.now(), modelIds?: ReadonlySet<string>): ProviderGatewayMetrics {
  const modelLabel = (model: string): string => (modelIds === undefined || modelIds.has(model) ? model : OTHER_MODEL_LABEL);
  const calls = new Counter({ name: "byok_model_calls_total", help: "Model calls ended, by model, client kind and outcome.", labelNames: ["model", "client_kind", "outcome"], registers: [registry] });
  const ttft = new Histogram({
    name: "byok_model_call_time_to_first_token_seconds",
    help: "Model call: request received by the gateway to first content event published.",
    labelNames: ["model"],
    buckets: TTFT_BUCKETS,
    registers: [registry],
  });
  const gatewayAdded = new Histogram({
    name: "byok_model_call_gateway_added_seconds",
    help: "Model call: gateway time before the first upstream request plus from the upstream chunk carrying the first content to its event published.",
    labelNames: ["model"],
    buckets: GATEWAY_ADDED_BUCKETS,
    registers: [registry],
  });
  const tokens = new Counter({ name: "byok_model_tokens_total", help: "Provider-reported tokens by model and kind (cache_* within input, reasoning within output).", labelNames: ["model", "kind"], registers: [registry] });
  const cost = new Counter({ name: "byok_model_cost_usd_total", help: "Cost of accounted model calls in USD, by model and team.", labelNames: ["model", "team"], registers: [registry] });
  const unknownCost = new Counter({ name: "byok_model_cost_unknown_calls_total", help: "Accounted model calls whose cost is unknown (missing price or usage), by model and team.", labelNames: ["model", "team"], registers: [registry] });
  const rejections = new Counter({ name: "byok_limit_rejections_total", help: "Model calls refused by a budget or limit, by limit.", labelNames: ["limit"], registers: [registry] });
  for (const limit of REJECTED_LIMITS) rejections.inc({ limit }, 0);

  return {
    callStarted() {},
    callEnded(call) {
      const model = modelLabel(call.routeId);
      calls.inc({ model, client_kind: call.clientKind, outcome: call.outcome.toLowerCase() });
      const usage = call.usage;
      if (usage === undefined) return;
      for (const [field, kind] of TOKEN_KINDS) {
        const count = usage[field];
        if (count !== undefined) tokens.inc({ model, kind }, count);
      }
    },
    modelCall(modelId, receivedAtMs) {
      const model = modelLabel(modelId);
      let sentAt: number | undefined;
      let chunkAt: number | undefined;
      let firstContent = false;
      const contentSent = (): void => {
        if (firstContent) return;
        firstContent = true;
        const at = now();
        ttft.observe({ model }, secondsSince(receivedAtMs, at));
        if (sentAt !== undefined && chunkAt !== undefined) gatewayAdded.observe({ model }, secondsSince(receivedAtMs, sentAt) + secondsSince(chunkAt, at));
      };
      return {
        requestSent() {
          sentAt ??= now();
        },
        bodyChunk() {
          if (!firstContent) chunkAt = now();
        },
        published(event) {
          switch (event.case) {
            case "textDelta":
            case "thinkingDelta":
            case "toolCallStart":
            case "toolCallArgsDelta":
              contentSent();
              return;
            default:
              return;
          }
        },
        contentSent,
      };
    },
    recordModelCost(modelId, team, callCost) {
      const model = modelLabel(modelId);
      if (callCost.kind === "known") cost.inc({ model, team }, callCost.usd);
      else unknownCost.inc({ model, team });
    },
    recordLimitRejection(limit) {
      rejections.inc({ limit: KNOWN_LIMITS.has(limit) ? limit : "other" });
    },
  };
}
