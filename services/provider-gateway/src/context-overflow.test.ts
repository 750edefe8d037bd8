/**
 * Context overflow per endpoint kind: the documented error shapes (the
 * hand-written fixtures) through the real adapters and SDKs against the mock
 * LLM become CONTEXT_OVERFLOW; errors compaction cannot fix stay what they were.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelFailureKind } from "@byok/contracts";
import { errorFixture, providerFixture } from "@byok/test-support/fixtures";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { isContextOverflow } from "./context-overflow.ts";
import { callThroughMock, modelRequest, testRoute, userText } from "./testing/call-kit.ts";

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

describe("context overflow from the endpoint", () => {
  const cases = [
    { kind: "openai-chat", response: () => errorFixture("openai-chat", "openai-context-length-exceeded.handwritten.error.json") },
    { kind: "openai-responses", response: () => errorFixture("openai-responses", "openai-responses-context-length-exceeded.handwritten.error.json") },
    { kind: "openai-responses", response: () => ({ kind: "fixture" as const, file: providerFixture("openai-responses", "openai-responses-context-length-failed.handwritten.jsonl") }) },
    { kind: "anthropic", response: () => errorFixture("anthropic", "anthropic-prompt-too-long.handwritten.error.json") },
  ] as const;

  for (const c of cases) {
    it(`${c.kind}: ${c.response().kind === "error" ? "HTTP 400" : "in the stream"} is CONTEXT_OVERFLOW, not retried`, async () => {
      const route = testRoute(c.kind, llm, { maxAttempts: 3 });
      const before = llm.requests.length;
      const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("a very long history")] }), c.response());
      expect(summary.outcome).toBe("failed");
      expect(summary.failure?.kind).toBe("CONTEXT_OVERFLOW");
      expect(llm.requests.length - before).toBe(1);
    });
  }

  it("anthropic: an overloaded stream error and request_too_large stay provider errors", async () => {
    const route = testRoute("anthropic", llm);
    const tooLarge = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("x")] }), {
      kind: "error",
      endpoint: "anthropic",
      status: 413,
      body: { type: "error", error: { type: "request_too_large", message: "Request exceeds the maximum allowed number of bytes." } },
    });
    expect(tooLarge.summary.failure?.kind).toBe("PROVIDER_ERROR");
  });
});

describe("isContextOverflow", () => {
  it("recognises each endpoint's codes and wordings", () => {
    expect(isContextOverflow("openai-chat", { code: "context_length_exceeded", message: undefined })).toBe(true);
    expect(isContextOverflow("openai-chat", { code: "model_max_prompt_tokens_exceeded", message: "prompt token count of 135000 exceeds the limit of 128000" })).toBe(true);
    expect(isContextOverflow("openai-chat", { code: undefined, message: "This model's maximum context length is 8192 tokens" })).toBe(true);
    expect(isContextOverflow("openai-responses", { code: "context_length_exceeded", message: "Your input exceeds the context window of this model." })).toBe(true);
    expect(isContextOverflow("anthropic", { code: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" })).toBe(true);
    expect(isContextOverflow("anthropic", { code: "invalid_request_error", message: "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000" })).toBe(true);
  });

  it("leaves what compaction cannot fix alone", () => {
    expect(isContextOverflow("openai-chat", { code: "invalid_api_key", message: "Incorrect API key provided" })).toBe(false);
    expect(isContextOverflow("openai-chat", { code: "rate_limit_exceeded", message: "Rate limit reached for requests" })).toBe(false);
    expect(isContextOverflow("anthropic", { code: "invalid_request_error", message: "This model does not support assistant message prefill." })).toBe(false);
    expect(isContextOverflow("anthropic", { code: "overloaded_error", message: "Overloaded" })).toBe(false);
    expect(ModelFailureKind.CONTEXT_OVERFLOW).toBeGreaterThan(0);
  });
});
