/**
 * Two-call exchanges on the Anthropic route: messages match the recorded
 * requests, tool_use is echoed and followed by a tool_result user turn,
 * thinking / redacted_thinking blocks come back verbatim and in order (only to
 * the route that produced them), and call 2 extends call 1 byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import { expectationFor } from "../../testing/fixture-oracle.ts";
import { assistant, assistantMessageOf, callThroughMock, historyPrefixOf, modelRequest, recordedRequest, testRoute, toolResult, userText } from "../../testing/call-kit.ts";

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- recorded JSON

describe("anthropic two-call exchange", () => {
  it("echoes tool_use and sends the tool_result like the recorded turn-2 request", async () => {
    const turn1 = recordedRequest(providerFixture("anthropic", "anthropic-sonnet46-tool-use-turn1.request.json")).body;
    const turn2 = recordedRequest(providerFixture("anthropic", "anthropic-sonnet46-tool-result-turn2-text.request.json")).body;
    const route = testRoute("anthropic", llm, { upstreamModel: turn1["model"], maxOutputTokens: turn1["max_tokens"] });
    const tools = [{ name: "str_replace_based_edit_tool", description: "View and edit files", parametersJson: '{"type":"object","properties":{"command":{"type":"string"},"path":{"type":"string"}}}' }];
    const question = userText(turn1["messages"][0].content[0].text);

    const first = await callThroughMock(llm, route, modelRequest({ route, system: turn1["system"], tools, messages: [question] }), {
      kind: "fixture",
      file: providerFixture("anthropic", "anthropic-sonnet46-tool-use-turn1.sse"),
    });
    const call = first.summary.toolCalls[0];
    if (call === undefined) throw new Error("turn 1 produced no tool call");
    const resultText = turn2["messages"][2].content[0].content as string;
    const second = await callThroughMock(
      llm,
      route,
      modelRequest({ route, system: turn1["system"], tools, messages: [question, assistant(assistantMessageOf(first.events)), toolResult(call.callId, call.name, resultText)] }),
      { kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet46-tool-result-turn2-text.sse") },
    );
    expect(second.summary.outcome).toBe("ok");
    const body1 = first.upstream?.body as Json;
    const body2 = second.upstream?.body as Json;
    expect(body1).toMatchObject({ model: turn1["model"], max_tokens: turn1["max_tokens"], stream: true, system: turn1["system"] });
    expect(body1["messages"]).toEqual(turn1["messages"]);
    expect(body2["messages"]).toEqual(turn2["messages"]);
    expect(body2["tools"]).toEqual([{ name: tools[0]?.name, description: tools[0]?.description, input_schema: JSON.parse(tools[0]?.parametersJson ?? "") }]);
    expect(historyPrefixOf(first.upstream?.rawBody ?? "", second.upstream?.rawBody ?? "")).toBe(true);
  });

  for (const name of ["anthropic-sonnet4-thinking-signature", "anthropic-sonnet45-redacted-thinking"]) {
    it(`replays the thinking blocks of ${name} verbatim, in order, before the text`, async () => {
      const recorded = recordedRequest(providerFixture("anthropic", `${name}.request.json`)).body;
      const route = testRoute("anthropic", llm, {
        maxOutputTokens: recorded["max_tokens"],
        supportsThinking: true,
        thinkingBudgetTokens: recorded["thinking"].budget_tokens,
      });
      const question = userText(recorded["messages"][0].content[0].text);
      const file = providerFixture("anthropic", `${name}.sse`);
      const first = await callThroughMock(llm, route, modelRequest({ route, messages: [question] }), { kind: "fixture", file });
      const body1 = first.upstream?.body as Json;
      expect(body1["thinking"]).toEqual(recorded["thinking"]);
      expect(body1["messages"]).toEqual(recorded["messages"]);

      const history = [question, assistant(assistantMessageOf(first.events)), userText("Thanks")];
      const second = await callThroughMock(llm, route, modelRequest({ route, messages: history }), { kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet45-text.jsonl") });
      const expected = expectationFor("anthropic", file);
      expect(expected.replayItems.length).toBeGreaterThan(0);
      const replayed = ((second.upstream?.body as Json)["messages"] as Json[])[1];
      expect(replayed).toEqual({ role: "assistant", content: [...expected.replayItems, { type: "text", text: expected.text }] });
      expect(historyPrefixOf(first.upstream?.rawBody ?? "", second.upstream?.rawBody ?? "")).toBe(true);

      const other = testRoute("anthropic", llm, { id: "other-anthropic-route", supportsThinking: true, thinkingBudgetTokens: 1024 });
      const third = await callThroughMock(llm, other, modelRequest({ route: other, messages: history }), { kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet45-text.jsonl") });
      expect(((third.upstream?.body as Json)["messages"] as Json[])[1]).toEqual({ role: "assistant", content: [{ type: "text", text: expected.text }] });
    });
  }

  it("keeps a signature-only thinking block (display omitted) for the replay", async () => {
    const route = testRoute("anthropic", llm, { supportsThinking: true });
    const file = providerFixture("anthropic", "anthropic-sonnet5-adaptive-thinking-display-omitted.jsonl");
    const question = userText("gcd?");
    const first = await callThroughMock(llm, route, modelRequest({ route, messages: [question] }), { kind: "fixture", file });
    expect((first.upstream?.body as Json)["thinking"]).toEqual({ type: "adaptive" });
    const second = await callThroughMock(llm, route, modelRequest({ route, messages: [question, assistant(assistantMessageOf(first.events)), userText("ok")] }), {
      kind: "fixture",
      file: providerFixture("anthropic", "anthropic-sonnet45-text.jsonl"),
    });
    const content = (((second.upstream?.body as Json)["messages"] as Json[])[1] as Json)["content"] as Json[];
    expect(content[0]).toMatchObject({ type: "thinking", thinking: "" });
    expect(content[0]?.["signature"]).toEqual(expectationFor("anthropic", file).replayItems.map((b) => (b as Json)["signature"])[0]);
    expect(content[1]?.["type"]).toBe("text");
  });
});
