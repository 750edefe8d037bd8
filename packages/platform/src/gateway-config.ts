/**
 * The team's gateway configuration file (JSON): providers (endpoint kind, base
 * URL, which env var holds the key), the BYOK models they serve (with the
 * model their sub-agents use) and the gateway-side web tools (web-config.ts).
 * The provider gateway reads the providers; the cursor adapter reads the
 * models and `web`; the edge proxy only the model ids. Nothing holds keys.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parsePricePerMillion } from "./usd.ts";
import { webConfigSchema } from "./web-config.ts";

export const providerKindSchema = z.enum(["openai-chat", "openai-responses", "anthropic"]);
export type ProviderKind = z.infer<typeof providerKindSchema>;

export const effortSchema = z.enum(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);
export type Effort = z.infer<typeof effortSchema>;

/** Responses API `reasoning.summary`: how much of the model's reasoning it summarizes into the stream. */
export const reasoningSummarySchema = z.enum(["auto", "concise", "detailed"]);
export type ReasoningSummary = z.infer<typeof reasoningSummarySchema>;

/**
 * How the run worker counts a model's tokens for its context estimate: a BPE
 * encoding for model families that publish theirs, or "bytes" (a bytes per
 * token ratio calibrated from the provider's own counts).
 */
export const tokenizerSchema = z.enum(["o200k_base", "cl100k_base", "bytes"]);
export type Tokenizer = z.infer<typeof tokenizerSchema>;

const providerSchema = z.object({
  kind: providerKindSchema,
  baseUrl: z.string().url(),
  /** Name of the environment variable holding the API key (the key itself never sits in the file). */
  apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/),
  /** Extra HTTP headers sent to this endpoint. */
  headers: z.record(z.string(), z.string()).default({}),
  /** Attempts before the first streamed byte for 429/5xx/connection errors (1 = no retry). */
  maxAttempts: z.number().int().min(1).max(10).default(3),
  /** Timeout for the response headers, in ms. */
  headersTimeoutMs: z.number().int().positive().default(60_000),
});

const modelIdSchema = z.string().regex(/^[A-Za-z0-9._:-]+$/).min(1).max(128);

/**
 * Which model a sub-agent (Task) started by a run on this model uses:
 * "inherit" (the same model; also when unset), "disabled" (Task is not
 * offered) or the id of another model of this file.
 */
export const subagentModelSchema = z.union([z.literal("inherit"), z.literal("disabled"), modelIdSchema]);
export type SubagentModel = z.infer<typeof subagentModelSchema>;

/** USD per million tokens: a JSON number or decimal string >= 0, at most 6 fractional digits (exact, no floats). */
const pricePerMillionSchema = z
  .union([z.number(), z.string()])
  .refine((v) => parsePricePerMillion(v) !== undefined, { message: "a price in USD per million tokens: a decimal >= 0 with at most 6 fractional digits" });

/**
 * A model's price in USD per million tokens, by kind of token. `input` is
 * uncached prompt tokens, `cachedInput` prompt tokens read from the
 * provider's cache, `cacheWrite` prompt tokens written to it, `output` the
 * answer, `reasoning` the output tokens spent on reasoning (default: the
 * `output` price). A kind without a price makes the cost of a call that used
 * it unknown (docs/control-plane.md has the exact rules).
 */
export const modelPriceSchema = z
  .object({
    input: pricePerMillionSchema.optional(),
    cachedInput: pricePerMillionSchema.optional(),
    cacheWrite: pricePerMillionSchema.optional(),
    output: pricePerMillionSchema.optional(),
    reasoning: pricePerMillionSchema.optional(),
  })
  .strict();
export type ModelPriceConfig = z.infer<typeof modelPriceSchema>;

const modelSchema = z.object({
  /** Id shown to Cursor (what comes back as requested_model.model_id). */
  id: modelIdSchema,
  /**
   * More names clients of the OpenAI/Anthropic-compatible API may ask for this
   * model by (e.g. "claude-sonnet-4-5" for Claude Code's default); ids and
   * aliases are unique together.
   */
  aliases: z.array(z.string().regex(/^[A-Za-z0-9._:/@-]+$/).min(1).max(128)).optional(),
  displayName: z.string().min(1),
  provider: z.string().min(1),
  /** Model name sent to the endpoint. */
  upstreamModel: z.string().min(1),
  contextWindow: z.number().int().positive().default(128_000),
  maxOutputTokens: z.number().int().positive().optional(),
  /** Default effort when the client picks none; unset = the endpoint's own default. */
  effort: effortSchema.optional(),
  /** Efforts this model accepts (offered in the picker). Empty = no effort parameter. */
  efforts: z.array(effortSchema).default([]),
  supportsThinking: z.boolean().default(false),
  supportsImages: z.boolean().default(false),
  /** Anthropic: thinking budget in tokens when thinking is on. */
  thinkingBudgetTokens: z.number().int().min(1024).optional(),
  /** openai-chat: send reasoning_content back on assistant messages. */
  replayReasoningContent: z.boolean().default(false),
  /**
   * openai-responses only: ask for reasoning summaries (`reasoning.summary`), which
   * stream as thinking; unset = none requested (the reasoning stays hidden). Setting
   * it on a model of another provider kind is a configuration error; the provider
   * gateway also requires supportsThinking with it.
   */
  reasoningSummary: reasoningSummarySchema.optional(),
  /**
   * anthropic only: cache_control breakpoints (end of system + tools, end of the
   * stable history prefix). Unset = on for Claude models (upstreamModel starting
   * with "claude"), off otherwise. OpenAI endpoints cache prefixes by themselves.
   */
  promptCaching: z.boolean().optional(),
  /**
   * anthropic: where the history breakpoint goes. "automatic" = the request-level
   * cache_control (the API moves it along; request bodies stay byte prefixes of
   * each other); "blocks" = explicit markers on the last message and the
   * previous request's end, for Anthropic-compatible endpoints without it. Default "automatic".
   */
  promptCacheBreakpoints: z.enum(["automatic", "blocks"]).optional(),
  /** Token counting for the run worker's context estimate; unset = inferred from the provider kind and upstream model. */
  tokenizer: tokenizerSchema.optional(),
  /** What a call costs (the ledger and USD budgets); unset = cost unknown. The provider gateway's GATEWAY_PRICES file overrides it. */
  price: modelPriceSchema.optional(),
  subagentModel: subagentModelSchema.optional(),
});

export const gatewayConfigSchema = z
  .object({
    providers: z.record(z.string(), providerSchema),
    models: z.array(modelSchema).min(1),
    /** Gateway-side web tools (WebFetch egress policy, WebSearch backend); unset = the defaults of web-config.ts. */
    web: webConfigSchema.optional(),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.models.forEach((m, i) => {
      if (seen.has(m.id)) ctx.addIssue({ code: "custom", path: ["models", i, "id"], message: `duplicate model id ${m.id}` });
      seen.add(m.id);
      (m.aliases ?? []).forEach((alias, j) => {
        if (seen.has(alias)) ctx.addIssue({ code: "custom", path: ["models", i, "aliases", j], message: `model name ${alias} is used twice` });
        seen.add(alias);
      });
      const provider = Object.hasOwn(config.providers, m.provider) ? config.providers[m.provider] : undefined;
      if (provider === undefined) ctx.addIssue({ code: "custom", path: ["models", i, "provider"], message: `unknown provider ${m.provider}` });
      else if (m.reasoningSummary !== undefined && provider.kind !== "openai-responses")
        ctx.addIssue({
          code: "custom",
          path: ["models", i, "reasoningSummary"],
          message: `model ${m.id}: reasoningSummary applies to openai-responses providers only (provider ${m.provider} is ${provider.kind})`,
        });
      else if (m.promptCaching === true && provider.kind !== "anthropic")
        ctx.addIssue({
          code: "custom",
          path: ["models", i, "promptCaching"],
          message: `model ${m.id}: promptCaching applies to anthropic providers only (OpenAI endpoints cache prefixes by themselves)`,
        });
    });
    const ids = new Set(config.models.map((m) => m.id));
    config.models.forEach((m, i) => {
      if (m.subagentModel !== undefined && m.subagentModel !== "inherit" && m.subagentModel !== "disabled" && !ids.has(m.subagentModel))
        ctx.addIssue({ code: "custom", path: ["models", i, "subagentModel"], message: `model ${m.id}: subagentModel ${m.subagentModel} is not a model of this file` });
    });
  });

/**
 * The tokenizer of a model: the configured one, else o200k_base / cl100k_base
 * for OpenAI model names whose encoding is published (gpt-4o, gpt-4.1, gpt-5,
 * o-series; gpt-4, gpt-3.5), else "bytes" (Claude and other families publish
 * no current tokenizer).
 */
export function modelTokenizer(model: Pick<ModelConfig, "tokenizer" | "upstreamModel">): Tokenizer {
  if (model.tokenizer !== undefined) return model.tokenizer;
  const name = model.upstreamModel.toLowerCase().replace(/^.*\//, "");
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o[1-9]|chatgpt-4o|gpt-oss|codex)/.test(name)) return "o200k_base";
  if (/^(gpt-4|gpt-3\.5)/.test(name)) return "cl100k_base";
  return "bytes";
}

/** Whether the Anthropic request mapping places cache_control breakpoints for this model. */
export function promptCachingOn(model: Pick<ModelConfig, "promptCaching" | "upstreamModel">, kind: ProviderKind): boolean {
  if (kind !== "anthropic") return false;
  return model.promptCaching ?? model.upstreamModel.toLowerCase().startsWith("claude");
}

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
export type ProviderConfig = GatewayConfig["providers"][string];
export type ModelConfig = GatewayConfig["models"][number];

export function parseGatewayConfig(json: unknown, source: string): GatewayConfig {
  const result = gatewayConfigSchema.safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`${source}: invalid gateway configuration\n${lines.join("\n")}`);
  }
  return result.data;
}

export function loadGatewayConfigFile(path: string): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (cause) {
    throw new Error(`cannot read gateway configuration ${path}: ${(cause as Error).message}`, { cause });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new Error(`${path}: not valid JSON: ${(cause as Error).message}`, { cause });
  }
  return parseGatewayConfig(json, path);
}
