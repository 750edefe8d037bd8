/**
 * The models the accounting prices, from the gateway configuration's
 * `models[].price`, overridden field by field by the optional price file
 * (GATEWAY_PRICES: `{"models": {"<model id>": {"output": 12.5}}}`), so that a
 * team can change prices without touching its model list. Prices become
 * integers here (µUSD per million tokens, platform/usd.ts).
 */
import { z } from "zod";
import { modelPriceSchema, parsePricePerMillion, type GatewayConfig, type ModelPriceConfig } from "@byok/platform";
import type { ModelPrice } from "./pricing.ts";

export const priceOverridesSchema = z.object({ models: z.record(z.string(), modelPriceSchema) }).strict();
export type PriceOverrides = z.infer<typeof priceOverridesSchema>;

export interface AccountedModel {
  readonly id: string;
  /** undefined = no price at all (every cost unknown). */
  readonly price: ModelPrice | undefined;
  /** Bounds the output of a call that names no output limit. */
  readonly contextWindow: number;
}

export type AccountedModels = ReadonlyMap<string, AccountedModel>;

function toPrice(config: ModelPriceConfig): ModelPrice {
  const field = (value: number | string | undefined): bigint | undefined => (value === undefined ? undefined : parsePricePerMillion(value));
  return {
    input: field(config.input),
    cachedInput: field(config.cachedInput),
    cacheWrite: field(config.cacheWrite),
    output: field(config.output),
    reasoning: field(config.reasoning),
  };
}

/** Throws (naming the model) when the overrides price a model the configuration does not have. */
export function accountedModels(config: GatewayConfig, overrides: PriceOverrides | undefined): AccountedModels {
  const ids = new Set(config.models.map((m) => m.id));
  const unknown = Object.keys(overrides?.models ?? {}).filter((id) => !ids.has(id));
  if (unknown.length > 0) throw new Error(`prices for models the gateway configuration does not have: ${unknown.join(", ")}`);
  const table = new Map<string, AccountedModel>();
  for (const model of config.models) {
    const override = overrides?.models[model.id];
    const merged = model.price === undefined && override === undefined ? undefined : { ...model.price, ...override };
    table.set(model.id, { id: model.id, price: merged === undefined ? undefined : toPrice(merged), contextWindow: model.contextWindow });
  }
  return table;
}
