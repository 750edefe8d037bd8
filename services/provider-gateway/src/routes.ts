/**
 * Routes: one per BYOK model alias in the gateway configuration, joining the
 * model (upstream name, limits, effort/thinking settings) with its provider
 * (endpoint kind, base URL, key, retry and timeout settings). Built once at
 * start-up; a route problem (missing key, inconsistent limits) stops the
 * gateway from starting instead of failing calls later.
 *
 * Base URLs are what the SDKs expect: OpenAI kinds include the version path
 * ("https://api.openai.com/v1"), Anthropic is the origin ("https://api.anthropic.com").
 */
import { ConfigError, promptCachingOn, type Effort, type Env, type GatewayConfig, type ProviderKind, type ReasoningSummary } from "@byok/platform";
import { Secret } from "./secret.ts";

export interface Route {
  /** The model alias clients ask for (ModelSpec.model_id). */
  readonly id: string;
  /** Shown in model lists. */
  readonly displayName: string;
  /** More names clients of the HTTP front may use for this route. */
  readonly aliases: readonly string[];
  readonly kind: ProviderKind;
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly baseUrl: string;
  readonly apiKey: Secret;
  readonly headers: Readonly<Record<string, string>>;
  readonly maxAttempts: number;
  readonly headersTimeoutMs: number;
  readonly contextWindow: number;
  readonly maxOutputTokens: number | undefined;
  /** Effort used when the ModelSpec names none; undefined = send no effort. */
  readonly effort: Effort | undefined;
  /** Efforts the endpoint accepts for this model; empty = it takes no effort parameter. */
  readonly efforts: readonly Effort[];
  readonly supportsThinking: boolean;
  readonly supportsImages: boolean;
  /** Anthropic: budgeted thinking (older models) instead of adaptive thinking. */
  readonly thinkingBudgetTokens: number | undefined;
  /** openai-chat: send reasoning_content back on this route's own assistant messages. */
  readonly replayReasoningContent: boolean;
  /** openai-responses: `reasoning.summary` to request; undefined = none. */
  readonly reasoningSummary: ReasoningSummary | undefined;
  /** anthropic: place cache_control breakpoints (gateway-config promptCachingOn). */
  readonly promptCaching: boolean;
  /** anthropic: how the history breakpoint is placed (adapters/anthropic/cache-breakpoints.ts). */
  readonly promptCacheBreakpoints: "automatic" | "blocks";
}

export type RouteTable = ReadonlyMap<string, Route>;

/** Build every route; a missing key or inconsistent model settings is a ConfigError naming the culprit. */
export function buildRoutes(config: GatewayConfig, env: Env): RouteTable {
  const problems: string[] = [];
  const routes = new Map<string, Route>();
  for (const model of config.models) {
    const provider = config.providers[model.provider];
    if (provider === undefined) {
      problems.push(`model ${model.id}: unknown provider ${model.provider}`);
      continue;
    }
    const key = env[provider.apiKeyEnv];
    if (key === undefined || key.trim() === "") {
      problems.push(`provider ${model.provider}: environment variable ${provider.apiKeyEnv} (its API key) is not set`);
      continue;
    }
    if (model.effort !== undefined && !model.efforts.includes(model.effort))
      problems.push(`model ${model.id}: default effort "${model.effort}" is not in its efforts [${model.efforts.join(", ")}]`);
    if (model.thinkingBudgetTokens !== undefined && provider.kind !== "anthropic")
      problems.push(`model ${model.id}: thinkingBudgetTokens applies to anthropic providers only`);
    if (model.thinkingBudgetTokens !== undefined && !model.supportsThinking)
      problems.push(`model ${model.id}: thinkingBudgetTokens needs supportsThinking`);
    if (model.thinkingBudgetTokens !== undefined && model.maxOutputTokens !== undefined && model.thinkingBudgetTokens >= model.maxOutputTokens)
      problems.push(`model ${model.id}: thinkingBudgetTokens must be below maxOutputTokens`);
    if (model.replayReasoningContent && provider.kind !== "openai-chat")
      problems.push(`model ${model.id}: replayReasoningContent applies to openai-chat providers only`);
    if (model.reasoningSummary !== undefined && provider.kind !== "openai-responses")
      problems.push(`model ${model.id}: reasoningSummary applies to openai-responses providers only`);
    if (model.reasoningSummary !== undefined && !model.supportsThinking)
      problems.push(`model ${model.id}: reasoningSummary needs supportsThinking`);
    routes.set(model.id, {
      id: model.id,
      displayName: model.displayName,
      aliases: model.aliases ?? [],
      kind: provider.kind,
      providerId: model.provider,
      upstreamModel: model.upstreamModel,
      baseUrl: provider.baseUrl.replace(/\/+$/, ""),
      apiKey: new Secret(key.trim()),
      headers: provider.headers,
      maxAttempts: provider.maxAttempts,
      headersTimeoutMs: provider.headersTimeoutMs,
      contextWindow: model.contextWindow,
      maxOutputTokens: model.maxOutputTokens,
      effort: model.effort,
      efforts: model.efforts,
      supportsThinking: model.supportsThinking,
      supportsImages: model.supportsImages,
      thinkingBudgetTokens: model.thinkingBudgetTokens,
      replayReasoningContent: model.replayReasoningContent,
      reasoningSummary: model.reasoningSummary,
      promptCaching: promptCachingOn(model, provider.kind),
      promptCacheBreakpoints: model.promptCacheBreakpoints ?? "automatic",
    });
  }
  if (problems.length > 0) throw new ConfigError(`provider-gateway: invalid routes\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return routes;
}
