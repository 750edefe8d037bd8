/**
 * What a model call costs, exactly, from the usage the provider reported and
 * the model's price; and the most a call may cost before it is made (its
 * reservation). Pure; integer arithmetic only.
 *
 * Prices are microdollars per million tokens (ModelPrice), so n tokens at
 * price p cost n * p picodollars, exactly. Usage (proto Usage): input_tokens
 * is the whole prompt with its cached parts; cache_read_tokens and
 * cache_write_tokens are parts of it, reasoning_tokens a part of
 * output_tokens. The cost is
 *
 *   (input - cache_read - cache_write) * input price
 *   + cache_read * cachedInput price + cache_write * cacheWrite price
 *   + (output - reasoning) * output price + reasoning * reasoning price
 *
 * with the reasoning price defaulting to the output price. The cost is
 * unknown (never 0) when: the model has no price; input or output tokens were
 * not reported, or the input or output price is missing; a part was reported
 * above 0 and has no price; a part was not reported but has a price of its
 * own that differs from its whole's (the split is needed and not known); or
 * the parts add up to more than their whole. A part that was not reported and
 * needs no split counts as 0.
 */
import type { CallUsage } from "./call-accounting.ts";

/** µUSD per million tokens by kind; undefined = no price for that kind. */
export interface ModelPrice {
  readonly input?: bigint | undefined;
  readonly cachedInput?: bigint | undefined;
  readonly cacheWrite?: bigint | undefined;
  readonly output?: bigint | undefined;
  readonly reasoning?: bigint | undefined;
}

export type CallCost = { readonly kind: "known"; readonly pico: bigint } | { readonly kind: "unknown"; readonly reason: string };

const unknown = (reason: string): CallCost => ({ kind: "unknown", reason });

interface Part {
  readonly name: string;
  readonly count: number | undefined;
  readonly price: bigint | undefined;
}

/** The part's token count for the formula, or why the cost is unknown. */
function partCount(part: Part, wholePrice: bigint): bigint | string {
  if (part.count === undefined) {
    if (part.price !== undefined && part.price !== wholePrice) return `${part.name} tokens were not reported but have their own price`;
    return 0n;
  }
  if (part.count > 0 && part.price === undefined) return `${part.count} ${part.name} tokens and no ${part.name} price`;
  return BigInt(part.count);
}

export function callCost(price: ModelPrice | undefined, usage: CallUsage | undefined): CallCost {
  if (price === undefined) return unknown("the model has no price");
  if (usage === undefined) return unknown("the provider reported no usage");
  if (usage.inputTokens === undefined || usage.outputTokens === undefined) return unknown("input or output tokens were not reported");
  if (price.input === undefined || price.output === undefined) return unknown("the model has no input or output price");
  const reasoningPrice = price.reasoning ?? price.output;
  const cacheRead = partCount({ name: "cache read", count: usage.cacheReadTokens, price: price.cachedInput }, price.input);
  const cacheWrite = partCount({ name: "cache write", count: usage.cacheWriteTokens, price: price.cacheWrite }, price.input);
  const reasoning = partCount({ name: "reasoning", count: usage.reasoningTokens, price: reasoningPrice }, price.output);
  for (const part of [cacheRead, cacheWrite, reasoning]) if (typeof part === "string") return unknown(part);
  const read = cacheRead as bigint;
  const write = cacheWrite as bigint;
  const thinking = reasoning as bigint;
  const input = BigInt(usage.inputTokens);
  const output = BigInt(usage.outputTokens);
  if (read + write > input) return unknown("cached tokens exceed the input tokens");
  if (thinking > output) return unknown("reasoning tokens exceed the output tokens");
  const pico =
    (input - read - write) * price.input +
    read * (price.cachedInput ?? 0n) +
    write * (price.cacheWrite ?? 0n) +
    (output - thinking) * price.output +
    thinking * reasoningPrice;
  return { kind: "known", pico };
}

function max(values: ReadonlyArray<bigint | undefined>): bigint {
  return values.reduce<bigint>((m, v) => (v !== undefined && v > m ? v : m), 0n);
}

/**
 * The most `inputTokens` of prompt and `outputTokens` of answer can cost
 * (every prompt token at the dearest input kind, every answer token at the
 * dearer of output and reasoning); undefined without input and output prices.
 */
export function costBound(price: ModelPrice | undefined, inputTokens: number, outputTokens: number): bigint | undefined {
  if (price?.input === undefined || price.output === undefined) return undefined;
  return BigInt(inputTokens) * max([price.input, price.cachedInput, price.cacheWrite]) + BigInt(outputTokens) * max([price.output, price.reasoning]);
}
