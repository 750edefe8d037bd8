/**
 * Pricing on recorded provider streams: each fixture goes through the real
 * adapter (SDK, HTTP, SSE decoding) against the mock LLM, and the Usage the
 * gateway reports is priced. Expected costs are worked out by hand from the
 * fixture's own numbers, so Anthropic's cache creation vs cache reads and
 * OpenAI's cached and reasoning token details each land on their own price.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePricePerMillion, parseUsd, type ProviderKind } from "@byok/platform";
import { providerFixture } from "@byok/test-support/fixtures";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { callThroughMock, modelRequest, testRoute, userText } from "../testing/call-kit.ts";
import type { CallUsage } from "./call-accounting.ts";
import { callCost, type ModelPrice } from "./pricing.ts";

const HANDWRITTEN_CACHE = providerFixture("anthropic", "anthropic-cache-read-and-write.handwritten.jsonl");

const p = (usd: string): bigint => parsePricePerMillion(usd) as bigint;
const SONNET: ModelPrice = { input: p("3"), cachedInput: p("0.30"), cacheWrite: p("3.75"), output: p("15") };
const GROK_MINI: ModelPrice = { input: p("0.30"), cachedInput: p("0.075"), output: p("0.50") };
const GPT5_NANO: ModelPrice = { input: p("0.05"), cachedInput: p("0.005"), output: p("0.40") };
const GPT4O: ModelPrice = { input: p("2.5"), cachedInput: p("1.25"), output: p("10") };

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

/** The usage the gateway reports for a fixture (the call may end in a failure; usage comes first). */
async function usageOf(kind: ProviderKind, file: string): Promise<CallUsage> {
  const route = testRoute(kind, llm);
  const result = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hello")] }), { kind: "fixture", file, endpoint: kind });
  const usage = result.summary.usage;
  if (usage === null) throw new Error(`${file}: no usage reported`);
  return usage;
}

const usd = (text: string): bigint => parseUsd(text) as bigint;

describe("pricing recorded usage", () => {
  it("Anthropic cache creation: written tokens at the cache-write price, the rest at input", async () => {
    const usage = await usageOf("anthropic", providerFixture("anthropic", "anthropic-sonnet46-max-tokens-cache-write.jsonl"));
    // Reported: input_tokens 3, cache_creation_input_tokens 18639, cache_read_input_tokens 0, output_tokens 1.
    expect(usage).toEqual({ inputTokens: 18642, cacheWriteTokens: 18639, cacheReadTokens: 0, outputTokens: 1 });
    // 3 * $3 + 18639 * $3.75 + 1 * $15 per million = 9 + 69896.25 + 15 µUSD
    expect(callCost(SONNET, usage)).toEqual({ kind: "known", pico: usd("0.06992025") });
  });

  it("Anthropic cache read and write in one call: each at its own price", async () => {
    const usage = await usageOf("anthropic", HANDWRITTEN_CACHE);
    expect(usage).toEqual({ inputTokens: 10225, cacheWriteTokens: 1200, cacheReadTokens: 9000, outputTokens: 87 });
    // 25 * $3 + 9000 * $0.30 + 1200 * $3.75 + 87 * $15 per million = 75 + 2700 + 4500 + 1305 µUSD
    expect(callCost(SONNET, usage)).toEqual({ kind: "known", pico: usd("0.00858") });
    // Without a cache-write price the cost of this call is unknown, not a guess.
    expect(callCost({ ...SONNET, cacheWrite: undefined }, usage)).toMatchObject({ kind: "unknown" });
  });

  it("OpenAI Responses cached input and reasoning tokens (xAI grok-3-mini)", async () => {
    const usage = await usageOf("openai-responses", providerFixture("openai-responses", "xai-grok3mini-incomplete-max-output-tokens.jsonl"));
    // Reported: input 24 (12 cached), output 678 (378 reasoning).
    expect(usage).toEqual({ inputTokens: 24, cacheReadTokens: 12, outputTokens: 678, reasoningTokens: 378 });
    // 12 * $0.30 + 12 * $0.075 + 678 * $0.50 (reasoning billed as output) = 3.6 + 0.9 + 339 µUSD
    expect(callCost(GROK_MINI, usage)).toEqual({ kind: "known", pico: usd("0.0003435") });
    // With a reasoning price of its own: 300 * $0.50 + 378 * $0.60 for the output.
    expect(callCost({ ...GROK_MINI, reasoning: p("0.60") }, usage)).toEqual({ kind: "known", pico: usd("0.0003813") });
  });

  it("OpenAI Chat cached and reasoning details (Azure gpt-5-nano)", async () => {
    const usage = await usageOf("openai-chat", providerFixture("openai-chat", "azure-gpt5nano-prompt-filter-prelude.jsonl"));
    expect(usage).toEqual({ inputTokens: 15, cacheReadTokens: 0, outputTokens: 78, reasoningTokens: 64 });
    // 15 * $0.05 + 78 * $0.40 = 0.75 + 31.2 µUSD
    expect(callCost(GPT5_NANO, usage)).toEqual({ kind: "known", pico: usd("0.00003195") });
  });

  it("OpenAI Chat without cached details: unknown under a cached-input price, exact without one", async () => {
    const usage = await usageOf("openai-chat", providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"));
    expect(usage).toEqual({ inputTokens: 14, outputTokens: 30, reasoningTokens: 0 });
    expect(callCost(GPT4O, usage)).toMatchObject({ kind: "unknown", reason: "cache read tokens were not reported but have their own price" });
    // 14 * $2.5 + 30 * $10 = 35 + 300 µUSD
    expect(callCost({ input: p("2.5"), output: p("10") }, usage)).toEqual({ kind: "known", pico: usd("0.000335") });
  });
});
