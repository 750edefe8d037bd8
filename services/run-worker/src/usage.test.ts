import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { UsageSchema, type Usage } from "@byok/contracts";
import { contextTokens, isEmptyUsage, sumTurnUsage } from "./usage.ts";

const usage = (init: MessageInitShape<typeof UsageSchema>): Usage => create(UsageSchema, init);

describe("sumTurnUsage", () => {
  it("sums every field all calls reported", () => {
    const total = sumTurnUsage([
      usage({ inputTokens: 100n, outputTokens: 20n, cacheReadTokens: 50n }),
      usage({ inputTokens: 130n, outputTokens: 7n, cacheReadTokens: 100n }),
    ]);
    expect(total.inputTokens).toBe(230n);
    expect(total.outputTokens).toBe(27n);
    expect(total.cacheReadTokens).toBe(150n);
  });

  it("leaves a field unset when any call did not report it (never zero for unknown)", () => {
    const total = sumTurnUsage([usage({ inputTokens: 1n, reasoningTokens: 4n }), usage({ inputTokens: 2n })]);
    expect(total.inputTokens).toBe(3n);
    expect(total.reasoningTokens).toBeUndefined();
    expect(total.outputTokens).toBeUndefined();
  });

  it("leaves everything unset when one call reported no usage at all", () => {
    const total = sumTurnUsage([usage({ inputTokens: 1n, outputTokens: 1n }), undefined]);
    expect(isEmptyUsage(total)).toBe(true);
  });

  it("keeps a reported zero", () => {
    expect(sumTurnUsage([usage({ cacheWriteTokens: 0n })]).cacheWriteTokens).toBe(0n);
  });

  it("is empty for a run without model calls", () => {
    expect(isEmptyUsage(sumTurnUsage([]))).toBe(true);
  });
});

describe("contextTokens", () => {
  it("is input + output of the call when both are known", () => {
    expect(contextTokens(usage({ inputTokens: 1000n, outputTokens: 24n }))).toBe(1024n);
  });
  it("is unknown when either side is missing", () => {
    expect(contextTokens(usage({ inputTokens: 1000n }))).toBeUndefined();
    expect(contextTokens(undefined)).toBeUndefined();
  });
});
