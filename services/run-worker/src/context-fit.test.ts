import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { MessageSchema, ModelSpecSchema, RunClientKind, UserOrigin, type Message, type RunId } from "@byok/contracts";
import type { CompactionConfig } from "./compaction.ts";
import { ContextFit } from "./context-fit.ts";
import { byteRatioCounter, type TokenCounter, type TokenCounters } from "./token-count.ts";

const user = (text: string): Message => create(MessageSchema, { body: { case: "user", value: { origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } });

/** TokenCounters whose BPE "count" is `bytesPerToken` (what a real encoding would find), recording each batch asked for. */
function fakeCounters(bytesPerToken: number): { counters: TokenCounters; batches: number[] } {
  const batches: number[] = [];
  const counters = {
    counterFor: (_model: string, _tokenizer: string, texts: readonly string[] = []): Promise<TokenCounter> => {
      batches.push(texts.length);
      return Promise.resolve(byteRatioCounter(bytesPerToken));
    },
  } as unknown as TokenCounters;
  return { counters, batches };
}

const compaction = { reservePercent: 10, prompt: { system: "", request: "" } } as unknown as CompactionConfig;

function fit(counters: TokenCounters, tokenizer: string, contextWindow: number): ContextFit {
  return new ContextFit(
    counters,
    {
      runId: "run" as RunId,
      conversationId: "c",
      memberId: "m",
      model: create(ModelSpecSchema, { modelId: "gpt", tokenizer, contextWindow }),
      prompt: undefined,
      clientKind: RunClientKind.CURSOR,
    },
    compaction,
  );
}

/** 1,000 messages of 100 bytes: 104,000 tokens at one per byte, 54,000 at two bytes per token. */
const history = Array.from({ length: 1000 }, (_, i) => user(`${String(i).padStart(4, "0")} ${"x".repeat(95)}`));

describe("context fit", () => {
  it("does not count a BPE history exactly when it fits at the dense-text ratio (no anchor needed)", async () => {
    const { counters, batches } = fakeCounters(4);
    // Budget 90,000: over it at one token per byte, under it at two bytes per token.
    expect(await fit(counters, "o200k_base", 100_000).overBudget(history, undefined)).toBeUndefined();
    expect(batches).toEqual([]);
  });

  it("counts exactly when even the dense-text estimate is over the budget, and reports what the exact count says", async () => {
    // Budget 45,000: the dense estimate (54,000) is over it, so the history is counted.
    const fits = fakeCounters(4); // 29,000 tokens counted: fits
    expect(await fit(fits.counters, "o200k_base", 50_000).overBudget(history, undefined)).toBeUndefined();
    expect(fits.batches).toHaveLength(1);
    const over = fakeCounters(1.5); // ~71,000 tokens counted: over
    const result = await fit(over.counters, "cl100k_base", 50_000).overBudget(history, undefined);
    expect(result?.budget.budget).toBe(45_000);
    expect(result?.estimate).toBeGreaterThan(45_000);
    expect(over.batches).toHaveLength(1);
  });

  it("keeps the ratio counter of a model without a BPE encoding (cheap, calibrated) in the decision", async () => {
    // Budget 63,000: a BPE model would skip the count here (54,000 at the dense ratio); this one is counted.
    const { counters, batches } = fakeCounters(1.5);
    const result = await fit(counters, "bytes", 70_000).overBudget(history, undefined);
    expect(batches).toHaveLength(1);
    expect(result?.estimate).toBeGreaterThan(63_000);
  });
});
