import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { contextBudget, estimateInputTokens, messagesTokens } from "./context-estimate.ts";
import { byteRatioCounter, DEFAULT_BYTES_PER_TOKEN, TokenCounters } from "./token-count.ts";

const user = (text: string): Message => create(MessageSchema, { body: { case: "user", value: { origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } });

describe("context budget and estimate", () => {
  it("keeps the reserve free: 200k -> 180k, 8k -> 7.2k; no window, no budget", () => {
    expect(contextBudget(200_000, 10)).toEqual({ window: 200_000, budget: 180_000 });
    expect(contextBudget(8_000, 10)?.budget).toBe(7_200);
    expect(contextBudget(undefined, 10)).toBeUndefined();
  });

  it("anchors on the provider's count and estimates only what came after it", () => {
    const counter = byteRatioCounter(1);
    const history = [user("a".repeat(1000)), user("b".repeat(100))];
    const prompt = { mode: "agent", systemText: "s".repeat(500), tools: [], toolsDigest: new Uint8Array(), $typeName: "byok.v1.PromptSpec" as const };
    expect(estimateInputTokens(counter, prompt, history, { messageCount: 1, inputTokens: 5_000 })).toBe(5_000 + messagesTokens(counter, [history[1]!]));
    // Without an anchor (or one that does not fit this history), everything is counted.
    expect(estimateInputTokens(counter, prompt, history, undefined)).toBe(500 + messagesTokens(counter, history));
    expect(estimateInputTokens(counter, prompt, history, { messageCount: 3, inputTokens: 1 })).toBe(500 + messagesTokens(counter, history));
  });

  it("calibrates bytes per token from the provider's counts of the same model", async () => {
    const counters = new TokenCounters();
    expect(counters.bytesPerToken("claude")).toBe(DEFAULT_BYTES_PER_TOKEN);
    counters.calibrate("claude", 30_000, 10_000);
    expect(counters.bytesPerToken("claude")).toBeCloseTo(3, 5);
    counters.calibrate("claude", 40_000, 10_000);
    expect(counters.bytesPerToken("claude")).toBeCloseTo(3.3, 5);
    expect((await counters.counterFor("claude", "bytes")).count("x".repeat(33))).toBe(10);
    expect(counters.bytesPerToken("other")).toBe(DEFAULT_BYTES_PER_TOKEN);
  });

  it("counts OpenAI models with their BPE encoding", async () => {
    const counters = new TokenCounters();
    try {
      const counter = await counters.counterFor("gpt", "o200k_base", ["hello world", "hello world hello world"]);
      expect(counter.name).toBe("o200k_base");
      expect(counter.count("hello world")).toBe(2);
      expect(counter.count("hello world hello world")).toBe(4);
      // A text outside the batch: estimated from the batch's bytes per token.
      expect(counter.count("x".repeat(34))).toBe(6);
    } finally {
      await counters.close();
    }
  }, 30_000);
});
