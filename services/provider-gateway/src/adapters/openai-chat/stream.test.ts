/**
 * Chat stream strictness: a stream that breaks the endpoint's rules or the
 * ModelEvent grammar ends in a typed failure (never a bad event stream), and
 * only an explicit finish_reason completes a call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import { fixturePayloads } from "../../testing/fixture-oracle.ts";
import { callThroughMock, cycleOutcome, modelRequest, testRoute, userText, type CallResult } from "../../testing/call-kit.ts";
import { cycleCheckedCall } from "../stream-test-support.ts";

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- chunk JSON

const chunk = (delta: Json, finish: string | null = null, extra: Json = {}): Json => ({
  id: "chatcmpl-test",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const toolStart = (slot: number, id: string, name: string, args = ""): Json => chunk({ tool_calls: [{ index: slot, id, type: "function", function: { name, arguments: args } }] });
const toolArgs = (slot: number, args: string): Json => chunk({ tool_calls: [{ index: slot, function: { arguments: args } }] });

function run(chunks: Json[]): Promise<CallResult> {
  return cycleCheckedCall(llm, "openai-chat", { kind: "chunks", endpoint: "openai-chat", chunks });
}

describe("openai-chat stream strictness", () => {
  const textFixture = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
  const textChunks = fixturePayloads(textFixture);
  const finishAt = textChunks.findIndex((c) => c["choices"]?.[0]?.finish_reason);

  it("a bare EOF before finish_reason is TRUNCATED, with the partial text kept for diagnostics", async () => {
    const route = testRoute("openai-chat", llm);
    const { summary, events } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), { kind: "fixture", file: textFixture, endAfterEvents: finishAt });
    const partial = textChunks.slice(0, finishAt).map((c) => c["choices"]?.[0]?.delta?.content ?? "").join("");
    expect(summary.failure).toMatchObject({ kind: "TRUNCATED", partialText: partial, retryable: true });
    expect(partial.length).toBeGreaterThan(10);
    expect(cycleOutcome(events)).toEqual({ kind: "failed", failure: "TRUNCATED" });
  });

  it("a dropped connection mid-stream is TRUNCATED", async () => {
    const route = testRoute("openai-chat", llm);
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), { kind: "fixture", file: textFixture, disconnectAfterEvents: 3 });
    expect(summary.failure?.kind).toBe("TRUNCATED");
  });

  it("an event cut in the middle at EOF is TRUNCATED", async () => {
    const route = testRoute("openai-chat", llm);
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), {
      kind: "sse",
      endpoint: "openai-chat",
      body: `data: ${JSON.stringify(chunk({ content: "Hel" }))}\n\ndata: {"id":"chatcmpl-test","choices":[{"index":0,"delta":{"content":"lo`,
    });
    expect(summary.failure).toMatchObject({ kind: "TRUNCATED", partialText: "Hel" });
  });

  it("the usage chunk after finish_reason is the call's usage; [DONE] is not required after finish_reason", async () => {
    const { summary } = await run([chunk({ content: "ok" }), chunk({}, "stop"), { id: "x", choices: [], usage: { prompt_tokens: 5, completion_tokens: 1 } }]);
    expect(summary).toMatchObject({ outcome: "ok", text: "ok", usage: { inputTokens: 5, outputTokens: 1 } });
  });

  it("a forced tool call that finishes with stop is still tool use", async () => {
    const { summary } = await run([toolStart(0, "call_1", "f", '{"a":'), toolArgs(0, "1}"), chunk({}, "stop")]);
    expect(summary).toMatchObject({ outcome: "ok", stopReason: "tool_use", toolCalls: [{ callId: "call_1", name: "f", argumentsJson: '{"a":1}' }] });
  });

  it("interleaved parallel tool call fragments are kept apart by slot index", async () => {
    const { summary } = await run([toolStart(0, "call_a", "f"), toolStart(1, "call_b", "g"), toolArgs(0, '{"x"'), toolArgs(1, '{"y":2}'), toolArgs(0, ":1}"), chunk({}, "tool_calls")]);
    expect(summary.toolCalls).toEqual([
      { callId: "call_a", name: "f", argumentsJson: '{"x":1}' },
      { callId: "call_b", name: "g", argumentsJson: '{"y":2}' },
    ]);
  });

  it("empty arguments are {}", async () => {
    const { summary } = await run([toolStart(0, "call_1", "f"), chunk({}, "tool_calls")]);
    expect(summary.toolCalls).toEqual([{ callId: "call_1", name: "f", argumentsJson: "{}" }]);
  });

  const protocolCases: Array<[string, Json[]]> = [
    ["arguments that are not complete JSON at finish_reason", [toolStart(0, "call_1", "f", '{"a":'), chunk({}, "tool_calls")]],
    ["a fragment for a tool slot that never started", [toolStart(0, "call_1", "f", "{}"), toolArgs(3, '{"b":1}'), chunk({}, "tool_calls")]],
    ["two tool calls with the same id", [toolStart(0, "call_1", "f", "{}"), toolStart(1, "call_1", "g", "{}"), chunk({}, "tool_calls")]],
    ["a tool slot that changes its id", [toolStart(0, "call_1", "f"), { ...toolStart(0, "call_2", "f") }, chunk({}, "tool_calls")]],
    ["content after finish_reason", [chunk({ content: "a" }), chunk({}, "stop"), chunk({ content: "b" })]],
    ["a second choice", [chunk({ content: "a" }), { choices: [{ index: 1, delta: { content: "b" }, finish_reason: null }] }, chunk({}, "stop")]],
  ];
  for (const [what, chunks] of protocolCases) {
    it(`${what} is a PROTOCOL failure`, async () => {
      const { summary } = await run(chunks);
      expect(summary.failure?.kind).toBe("PROTOCOL");
    });
  }

  it("finish_reason length is LENGTH even with a tool call in progress; its usage is kept", async () => {
    const { summary, events } = await run([toolStart(0, "call_1", "f", '{"a":"tr'), chunk({}, "length", { usage: { prompt_tokens: 3, completion_tokens: 9 } })]);
    expect(summary.failure?.kind).toBe("LENGTH");
    expect(summary.usage).toEqual({ inputTokens: 3, outputTokens: 9 });
    expect(events.some((e) => e.case === "toolCallEnd")).toBe(false);
  });

  it("an error payload is a PROVIDER_ERROR even when [DONE] follows", async () => {
    const { summary } = await run([chunk({ content: "partial" }), { ...chunk({ content: "" }, "stop"), error: { code: 400, message: "Token limit reached" }, usage: { prompt_tokens: 7, completion_tokens: 2 } }]);
    expect(summary.failure).toMatchObject({ kind: "PROVIDER_ERROR", partialText: "partial" });
    expect(summary.failure?.message).toContain("Token limit reached");
    expect(summary.usage).toEqual({ inputTokens: 7, outputTokens: 2 });
  });

  it("a refusal or a content filter is REFUSAL", async () => {
    expect((await run([chunk({ refusal: "I can't help with that." }), chunk({}, "stop")])).summary.failure?.kind).toBe("REFUSAL");
    expect((await run([chunk({ content: "x" }), chunk({}, "content_filter")])).summary.failure?.kind).toBe("REFUSAL");
  });
});
