/**
 * The HTTP front on the shared call accounting: what it asks admit() (member,
 * client kind, route, request id, estimates), settle() with the usage read
 * from the passing stream (same shape) or the ModelEvents (translated), and
 * the rejection paths: 429 + Retry-After and 403, in the client's format.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "@byok/test-support/infra";
import { providerFixture } from "@byok/test-support/fixtures";
import type { AccountingTicket, AdmissionDecision, CallAccounting, CallAdmission, CallUsage } from "../accounting/call-accounting.ts";
import { expectationFor } from "../testing/fixture-oracle.ts";
import { MEMBER_ID, ROUTES, startInboundKit, type InboundKit } from "../testing/inbound-kit.ts";

let kit: InboundKit | undefined;
afterEach(async () => {
  await kit?.stop();
  kit = undefined;
});

function recordingAccounting(decide: (call: CallAdmission) => AdmissionDecision = (call) => ({ kind: "admitted", ticket: { admission: call } })) {
  const admitted: CallAdmission[] = [];
  const settled: Array<{ ticket: AccountingTicket; usage: CallUsage | undefined }> = [];
  const accounting: CallAccounting = {
    admit: async (call) => {
      admitted.push(call);
      return decide(call);
    },
    settle: async (ticket, usage) => {
      settled.push({ ticket, usage });
    },
  };
  return { accounting, admitted, settled };
}

describe("call accounting on the HTTP front", () => {
  it("admits with the client kind and request id and settles with the usage of the passing stream", async () => {
    const rec = recordingAccounting();
    kit = await startInboundKit({ accounting: rec.accounting });
    const file = providerFixture("anthropic", "anthropic-sonnet46-max-tokens-cache-write.jsonl");
    kit.llm.enqueue({ kind: "fixture", file });
    await kit.anthropic().messages.stream({ model: ROUTES.anthropic, max_tokens: 300, messages: [{ role: "user", content: "x".repeat(400) }] }).finalMessage();
    expect(rec.admitted[0]).toMatchObject({ memberId: MEMBER_ID, clientKind: "anthropic-api", routeId: ROUTES.anthropic, upstreamModel: "claude-upstream-a", maxOutputTokens: 300, call: { kind: "request" } });
    expect(rec.admitted[0]?.inputTokenEstimate).toBeGreaterThanOrEqual(100);
    await waitFor(() => rec.settled.length === 1, "the call to be settled");
    const usage = expectationFor("anthropic", file).usage;
    expect(rec.settled[0]?.usage).toMatchObject({ inputTokens: usage?.["inputTokens"], outputTokens: usage?.["outputTokens"], cacheWriteTokens: usage?.["cacheWriteTokens"] });

    const chatFile = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
    kit.llm.enqueue({ kind: "fixture", file: chatFile });
    await kit.openai().responses.stream({ model: ROUTES.chat, input: "hi" }).finalResponse();
    await waitFor(() => rec.settled.length === 2, "the translated call to be settled");
    expect(rec.admitted[1]).toMatchObject({ clientKind: "openai-api", routeId: ROUTES.chat });
    expect(rec.settled[1]?.usage).toMatchObject({ inputTokens: expectationFor("openai-chat", chatFile).usage?.["inputTokens"] });
  });

  it("over a limit: 429 with Retry-After in the OpenAI and the Anthropic format, nothing sent upstream", async () => {
    const rec = recordingAccounting(() => ({ kind: "rejected", limit: "member_rpm", message: "too many requests this minute", retryAfterMs: 12_500 }));
    kit = await startInboundKit({ accounting: rec.accounting });
    const openaiError = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(openaiError).toBeInstanceOf(OpenAI.RateLimitError);
    const limited = openaiError as InstanceType<typeof OpenAI.RateLimitError>;
    expect(limited.headers?.get("retry-after")).toBe("13");
    expect(limited.error).toMatchObject({ message: "too many requests this minute", type: "rate_limit_error", code: "member_rpm" });
    const anthropicError = await kit.anthropic().messages.create({ model: ROUTES.chat, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(anthropicError).toBeInstanceOf(Anthropic.RateLimitError);
    expect((anthropicError as InstanceType<typeof Anthropic.RateLimitError>).headers?.get("retry-after")).toBe("13");
    expect((anthropicError as InstanceType<typeof Anthropic.RateLimitError>).error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(kit.llm.requests).toHaveLength(0);
    expect(rec.settled).toHaveLength(0);
  });

  it("a model the member may not use: 403", async () => {
    const rec = recordingAccounting(() => ({ kind: "forbidden", message: "this model is not enabled for you" }));
    kit = await startInboundKit({ accounting: rec.accounting });
    const error = await kit.openai().responses.create({ model: ROUTES.responses, input: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(kit.llm.requests).toHaveLength(0);
  });
});
