import { describe, expect, it } from "vitest";
import { parsePricePerMillion } from "@byok/platform";
import { callCost, costBound, type ModelPrice } from "./pricing.ts";

const p = (usdPerMillion: string): bigint => parsePricePerMillion(usdPerMillion) as bigint;
/** Picodollars of a USD decimal, for readable expectations. */
const usd = (text: string): bigint => {
  const [whole, fraction = ""] = text.split(".");
  return BigInt(whole ?? "0") * 10n ** 12n + BigInt(fraction.padEnd(12, "0"));
};

const SONNET: ModelPrice = { input: p("3"), cachedInput: p("0.30"), cacheWrite: p("3.75"), output: p("15") };
const GPT: ModelPrice = { input: p("2.5"), cachedInput: p("1.25"), output: p("10") };

describe("call cost", () => {
  it("prices uncached input, cache reads, cache writes, plain output and reasoning each at their own price", () => {
    // 1,000 prompt tokens of which 600 read from cache and 300 written to it; 200 output of which 50 reasoning.
    const price: ModelPrice = { ...SONNET, reasoning: p("20") };
    const cost = callCost(price, { inputTokens: 1000, cacheReadTokens: 600, cacheWriteTokens: 300, outputTokens: 200, reasoningTokens: 50 });
    // 100*3 + 600*0.30 + 300*3.75 + 150*15 + 50*20 = 300 + 180 + 1125 + 2250 + 1000 = 4855 µUSD
    expect(cost).toEqual({ kind: "known", pico: usd("0.004855") });
  });

  it("bills reasoning at the output price unless it has its own, and then needs the reasoning count", () => {
    expect(callCost(GPT, { inputTokens: 10, cacheReadTokens: 0, outputTokens: 100, reasoningTokens: 80 })).toEqual({ kind: "known", pico: usd("0.001025") });
    expect(callCost(GPT, { inputTokens: 10, cacheReadTokens: 0, outputTokens: 100 })).toEqual({ kind: "known", pico: usd("0.001025") });
    expect(callCost({ ...GPT, reasoning: p("12") }, { inputTokens: 10, cacheReadTokens: 0, outputTokens: 100 })).toMatchObject({ kind: "unknown" });
  });

  it("is unknown, never 0, without a price, without usage, or without input or output counts", () => {
    expect(callCost(undefined, { inputTokens: 1, outputTokens: 1 })).toMatchObject({ kind: "unknown", reason: "the model has no price" });
    expect(callCost(GPT, undefined)).toMatchObject({ kind: "unknown" });
    expect(callCost(GPT, { outputTokens: 5 })).toMatchObject({ kind: "unknown" });
    expect(callCost({ input: p("1") }, { inputTokens: 5, outputTokens: 5 })).toMatchObject({ kind: "unknown" });
  });

  it("is unknown when a part was used but has no price, or when a priced part was not reported", () => {
    // Anthropic-style cache writes on a model without a cacheWrite price.
    expect(callCost(GPT, { inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 40, outputTokens: 1 })).toMatchObject({ kind: "unknown", reason: "40 cache write tokens and no cache write price" });
    // Cache reads have their own price: a provider that does not say how many were cached leaves the cost open.
    expect(callCost(GPT, { inputTokens: 100, outputTokens: 1 })).toMatchObject({ kind: "unknown" });
    // A model priced for input only needs no split: unreported parts count as 0, reported zeros are fine.
    expect(callCost({ input: p("1"), output: p("2") }, { inputTokens: 100, cacheWriteTokens: 0, outputTokens: 10 })).toEqual({ kind: "known", pico: usd("0.00012") });
  });

  it("refuses usage whose parts add up to more than their whole", () => {
    expect(callCost(SONNET, { inputTokens: 10, cacheReadTokens: 8, cacheWriteTokens: 8, outputTokens: 1 })).toMatchObject({ kind: "unknown" });
    expect(callCost(GPT, { inputTokens: 10, cacheReadTokens: 0, outputTokens: 1, reasoningTokens: 2 })).toMatchObject({ kind: "unknown" });
  });

  it("is exact where floats are not: 3 tokens at $0.1 per million", () => {
    expect(callCost({ input: p("0.1"), output: p("0.2") }, { inputTokens: 3, outputTokens: 0 })).toEqual({ kind: "known", pico: 300_000n });
  });
});

describe("cost bound", () => {
  it("takes every prompt token at the dearest input kind and every answer token at the dearer output kind", () => {
    expect(costBound(SONNET, 1000, 100)).toBe(1000n * p("3.75") + 100n * p("15"));
    expect(costBound({ ...GPT, reasoning: p("40") }, 10, 10)).toBe(10n * p("2.5") + 10n * p("40"));
    expect(costBound({ output: p("1") }, 10, 10)).toBeUndefined();
  });
});
