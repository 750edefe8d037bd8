/**
 * Two-call exchanges on the chat route: the requests we build match the real
 * recorded requests, call 2's history is a byte-level extension of call 1's,
 * and reasoning replay goes back only to the route that produced it.
 */
import { silentLogger } from "@byok/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import { adapterFor } from "../index.ts";
import { fixturePayloads } from "../../testing/fixture-oracle.ts";
import { assistant, assistantMessageOf, callThroughMock, historyPrefixOf, modelRequest, recordedRequest, testRoute, toolResult, userText } from "../../testing/call-kit.ts";

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

describe("openai-chat two-call exchange", () => {
  it("sends the tool call and its result back exactly like the recorded turn-2 request", async () => {
    const turn1 = recordedRequest(providerFixture("openai-chat", "openai-gpt4omini-tool-call-turn1.request.json")).body;
    const turn2 = recordedRequest(providerFixture("openai-chat", "openai-gpt4omini-tool-call-turn2-text.request.json")).body;
    const route = testRoute("openai-chat", llm, { upstreamModel: turn1["model"], maxOutputTokens: undefined });
    const tool = turn1["tools"][0].function;
    const tools = [{ name: tool.name, description: tool.description, parametersJson: JSON.stringify(tool.parameters) }];
    const question = userText(turn1["messages"][0].content);

    const first = await callThroughMock(llm, route, modelRequest({ route, tools, messages: [question] }), {
      kind: "fixture",
      file: providerFixture("openai-chat", "openai-gpt4omini-tool-call-turn1.sse"),
    });
    expect(first.summary.stopReason).toBe("tool_use");
    const call = first.summary.toolCalls[0];
    if (call === undefined) throw new Error("turn 1 produced no tool call");
    const toolAnswer = turn2["messages"][2].content as string;
    const second = await callThroughMock(
      llm,
      route,
      modelRequest({ route, tools, messages: [question, assistant(assistantMessageOf(first.events)), toolResult(call.callId, call.name, toolAnswer)] }),
      { kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4omini-tool-call-turn2-text.sse") },
    );
    expect(second.summary.outcome).toBe("ok");

    const body1 = first.upstream?.body as Record<string, unknown>;
    const body2 = second.upstream?.body as Record<string, unknown>;
    expect(body1["messages"]).toEqual(turn1["messages"]);
    expect(body2["messages"]).toEqual(turn2["messages"]);
    expect(body2["stream_options"]).toEqual(turn2["stream_options"]);
    expect(body2["tools"]).toEqual([{ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } }]);
    expect(historyPrefixOf(first.upstream?.rawBody ?? "", second.upstream?.rawBody ?? "")).toBe(true);
  });

  it("builds byte-identical bodies for the same request, exactly as sent", async () => {
    const route = testRoute("openai-chat", llm, { efforts: ["low", "high"], effort: "low" });
    const request = modelRequest({
      route,
      system: "You are terse.",
      tools: [{ name: "read_file", description: "Read a file", parametersJson: '{"type":"object","properties":{"path":{"type":"string"}}}' }],
      messages: [userText("hi")],
      spec: { effort: "high", maxOutputTokens: 1000 },
    });
    const bound = adapterFor("openai-chat").bind(route, silentLogger());
    const a = bound.prepare(request);
    const b = bound.prepare(request);
    if (a.kind !== "ready" || b.kind !== "ready") throw new Error("request rejected");
    expect(JSON.stringify(a.body)).toBe(JSON.stringify(b.body));
    const sent = await callThroughMock(llm, route, request, { kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse") });
    expect(sent.upstream?.rawBody).toBe(JSON.stringify(a.body));
    expect(sent.upstream?.body).toMatchObject({ reasoning_effort: "high", max_completion_tokens: 1000, messages: [{ role: "system", content: "You are terse." }, { role: "user", content: "hi" }] });
  });

  describe("reasoning_content replay", () => {
    const reasoningFixture = providerFixture("openai-chat", "deepseek-reasoner-reasoning-content.sse");
    const reasoningText = fixturePayloads(reasoningFixture)
      .flatMap((p) => (p["choices"] ?? []) as Array<{ delta?: { reasoning_content?: string | null } }>)
      .map((c) => c.delta?.reasoning_content ?? "")
      .join("");

    async function secondRequestAfterReasoning(producer: ReturnType<typeof testRoute>, consumer: ReturnType<typeof testRoute>): Promise<Array<Record<string, unknown>>> {
      const question = userText("9.11 and 9.8, which is greater?");
      const first = await callThroughMock(llm, producer, modelRequest({ route: producer, messages: [question] }), { kind: "fixture", file: reasoningFixture });
      expect(first.summary.outcome).toBe("ok");
      const second = await callThroughMock(
        llm,
        consumer,
        modelRequest({ route: consumer, messages: [question, assistant(assistantMessageOf(first.events)), userText("And 9.9?")] }),
        { kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse") },
      );
      return (second.upstream?.body as { messages: Array<Record<string, unknown>> }).messages;
    }

    it("sends the reasoning back to the route that produced it", async () => {
      const route = testRoute("openai-chat", llm, { replayReasoningContent: true });
      const messages = await secondRequestAfterReasoning(route, route);
      expect(reasoningText.length).toBeGreaterThan(100);
      expect(messages[1]).toMatchObject({ role: "assistant", reasoning_content: reasoningText });
    });

    it("does not send it to another route, or when the route does not replay it", async () => {
      const producer = testRoute("openai-chat", llm, { replayReasoningContent: true });
      const other = testRoute("openai-chat", llm, { id: "other-chat-route", replayReasoningContent: true });
      const foreign = await secondRequestAfterReasoning(producer, other);
      expect(foreign[1]).not.toHaveProperty("reasoning_content");
      expect(foreign[1]).toMatchObject({ role: "assistant" });
      const plain = testRoute("openai-chat", llm);
      const off = await secondRequestAfterReasoning(plain, plain);
      expect(off[1]).not.toHaveProperty("reasoning_content");
    });
  });
});
