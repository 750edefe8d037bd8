/**
 * Two-call exchanges on the Responses route: stateless requests (store:false,
 * no previous_response_id), function calls echoed with their call_id, every
 * reasoning item of the previous turn replayed verbatim and in order (only to
 * the route that produced it), and call 2's input a byte-level extension of
 * call 1's. A model with reasoningSummary asks for summaries and gets one
 * thinking block per summary part.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import { fixturePayloads } from "../../testing/fixture-oracle.ts";
import type { ModelEventBody } from "../../events.ts";
import { assistant, assistantMessageOf, callThroughMock, cycleOutcome, historyPrefixOf, modelRequest, recordedRequest, testRoute, toolResult, userText } from "../../testing/call-kit.ts";

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- recorded JSON

function terminalOutput(file: string): Json[] {
  const terminal = fixturePayloads(file).find((p) => p["type"] === "response.completed");
  return (terminal?.["response"]?.output ?? []) as Json[];
}

/** The thinking blocks of a call in stream order: their text and whether they were ended. */
function thinkingBlocks(events: readonly ModelEventBody[]): Array<{ text: string; ended: boolean }> {
  const blocks = new Map<number, { text: string; ended: boolean }>();
  for (const event of events) {
    if (event.case === "thinkingStart") blocks.set(event.value.index ?? 0, { text: "", ended: false });
    else if (event.case === "thinkingDelta") {
      const block = blocks.get(event.value.index ?? 0);
      if (block === undefined || block.ended) throw new Error(`thinking delta outside an open block ${event.value.index ?? 0}`);
      block.text += event.value.text ?? "";
    } else if (event.case === "thinkingEnd") {
      const block = blocks.get(event.value.index ?? 0);
      if (block === undefined) throw new Error(`end of unknown thinking block ${event.value.index ?? 0}`);
      block.ended = true;
    }
  }
  return [...blocks.values()];
}

describe("openai-responses two-call exchange", () => {
  it("echoes the function call with its call_id and the tool output (turn-2 fixture, call_id corrected)", async () => {
    const turn1 = recordedRequest(providerFixture("openai-responses", "openai-gpt4o-function-call-turn1.request.json")).body;
    const turn2 = recordedRequest(providerFixture("openai-responses", "openai-gpt4o-function-call-turn2-text.request.json")).body;
    const route = testRoute("openai-responses", llm, { upstreamModel: turn1["model"], maxOutputTokens: undefined });
    const tool = turn1["tools"][0];
    const tools = [{ name: tool.name, description: tool.description, parametersJson: JSON.stringify(tool.parameters) }];
    const question = userText(turn1["input"][0].content);

    const file1 = providerFixture("openai-responses", "openai-gpt4o-function-call-turn1.sse");
    const first = await callThroughMock(llm, route, modelRequest({ route, tools, messages: [question] }), { kind: "fixture", file: file1 });
    const call = first.summary.toolCalls[0];
    if (call === undefined) throw new Error("turn 1 produced no function call");
    const recordedCall = terminalOutput(file1).find((i) => i["type"] === "function_call") as Json;
    expect(call.callId).toBe(recordedCall["call_id"]);
    expect(call.callId).not.toBe(recordedCall["id"]);

    const output = turn2["input"][2].output as string;
    const second = await callThroughMock(
      llm,
      route,
      modelRequest({ route, tools, messages: [question, assistant(assistantMessageOf(first.events)), toolResult(call.callId, call.name, output)] }),
      { kind: "fixture", file: providerFixture("openai-responses", "openai-gpt4o-function-call-turn2-text.sse") },
    );
    expect(second.summary.outcome).toBe("ok");
    const body1 = first.upstream?.body as Json;
    const body2 = second.upstream?.body as Json;
    expect(body1).toMatchObject({ model: turn1["model"], stream: true, store: false });
    expect(body1).not.toHaveProperty("previous_response_id");
    expect(body1["tools"]).toEqual([{ type: "function", name: tool.name, description: tool.description, parameters: tool.parameters, strict: false }]);
    expect(body1["input"]).toEqual([{ type: "message", role: "user", content: [{ type: "input_text", text: turn1["input"][0].content }] }]);
    // The recording reused the fc_ item id as call_id; the correct value is the item's call_id.
    const expectedTail = turn2["input"].slice(1).map((item: Json) => ({ ...item, call_id: call.callId }));
    expect(body2["input"].slice(1)).toEqual(expectedTail.map((item: Json) => (item["type"] === "function_call" ? { type: item["type"], call_id: item["call_id"], name: item["name"], arguments: item["arguments"] } : { type: item["type"], call_id: item["call_id"], output: item["output"] })));
    expect(historyPrefixOf(first.upstream?.rawBody ?? "", second.upstream?.rawBody ?? "")).toBe(true);
  });

  it("replays the encrypted reasoning item before the function call it preceded", async () => {
    const recorded = recordedRequest(providerFixture("openai-responses", "openai-gpt5-reasoning-encrypted-forced-function-call.request.json")).body;
    const route = testRoute("openai-responses", llm, { upstreamModel: recorded["model"], supportsThinking: true, efforts: ["low", "medium", "high"], maxOutputTokens: undefined });
    const tool = recorded["tools"][0];
    const tools = [{ name: tool.name, description: tool.description, parametersJson: JSON.stringify(tool.parameters) }];
    const question = userText(recorded["input"][0].content);
    const file = providerFixture("openai-responses", "openai-gpt5-reasoning-encrypted-forced-function-call.sse");

    const first = await callThroughMock(llm, route, modelRequest({ route, tools, messages: [question], spec: { effort: "low" } }), { kind: "fixture", file });
    const body1 = first.upstream?.body as Json;
    expect(body1["include"]).toEqual(recorded["include"]);
    expect(body1["reasoning"]).toEqual({ effort: recorded["reasoning"].effort });
    const call = first.summary.toolCalls[0];
    if (call === undefined) throw new Error("no function call");

    const history = [question, assistant(assistantMessageOf(first.events)), toolResult(call.callId, call.name, '{"ok":true}')];
    const second = await callThroughMock(llm, route, modelRequest({ route, tools, messages: history, spec: { effort: "low" } }), {
      kind: "fixture",
      file: providerFixture("openai-responses", "openai-gpt4o-function-call-turn2-text.sse"),
    });
    const snapshot = terminalOutput(file);
    const reasoning = snapshot.filter((i) => i["type"] === "reasoning");
    expect(reasoning).toHaveLength(1);
    expect(reasoning[0]?.["encrypted_content"]).toMatch(/^gAAAA/);
    const input = (second.upstream?.body as Json)["input"] as Json[];
    expect(input.map((i) => i["type"])).toEqual(["message", "reasoning", "function_call", "function_call_output"]);
    expect(input[1]).toEqual(reasoning[0]);
    expect(historyPrefixOf(first.upstream?.rawBody ?? "", second.upstream?.rawBody ?? "")).toBe(true);

    // Another route gets the visible turn only.
    const other = testRoute("openai-responses", llm, { id: "other-responses-route", supportsThinking: true, efforts: ["low"] });
    const third = await callThroughMock(llm, other, modelRequest({ route: other, tools, messages: history }), {
      kind: "fixture",
      file: providerFixture("openai-responses", "openai-gpt4o-function-call-turn2-text.sse"),
    });
    expect(((third.upstream?.body as Json)["input"] as Json[]).map((i) => i["type"])).toEqual(["message", "function_call", "function_call_output"]);
  });

  it("requests reasoning summaries where configured, streams one thinking block per summary part, and replays the encrypted item unchanged", async () => {
    const recorded = recordedRequest(providerFixture("openai-responses", "openai-o3mini-reasoning-summary-encrypted.request.json")).body;
    const route = testRoute("openai-responses", llm, {
      upstreamModel: recorded["model"],
      supportsThinking: true,
      efforts: ["low", "medium", "high"],
      reasoningSummary: recorded["reasoning"].summary,
      maxOutputTokens: undefined,
    });
    const file = providerFixture("openai-responses", "openai-o3mini-reasoning-summary-encrypted.sse");
    const question = userText(recorded["input"][0].content);
    const spec = { effort: recorded["reasoning"].effort as string };
    const first = await callThroughMock(llm, route, modelRequest({ route, messages: [question], spec }), { kind: "fixture", file });
    expect(first.summary.outcome).toBe("ok");
    expect(cycleOutcome(first.events)).toEqual({ kind: "completed" });

    // The request asks for the summary the way the recorded request did (same keys, same order).
    const body1 = first.upstream?.body as Json;
    expect(JSON.stringify(body1["reasoning"])).toBe(JSON.stringify(recorded["reasoning"]));
    expect(body1["include"]).toEqual(recorded["include"]);

    // One thinking block per summary part, each holding exactly that part's deltas, before the answer text.
    const payloads = fixturePayloads(file);
    const partDeltas = new Map<number, string>();
    for (const p of payloads.filter((p) => p["type"] === "response.reasoning_summary_text.delta"))
      partDeltas.set(p["summary_index"], (partDeltas.get(p["summary_index"]) ?? "") + p["delta"]);
    const partsDone = payloads.filter((p) => p["type"] === "response.reasoning_summary_text.done").map((p) => p["text"] as string);
    expect(partDeltas.size).toBe(4);
    expect([...partDeltas.values()]).toEqual(partsDone);
    const blocks = thinkingBlocks(first.events);
    expect(blocks.map((b) => b.text)).toEqual([...partDeltas.values()]);
    expect(blocks.every((b) => b.ended)).toBe(true);
    expect(first.summary.thinking).toBe([...partDeltas.values()].join(""));
    const firstText = first.events.findIndex((e) => e.case === "textStart");
    const lastThinkingEnd = first.events.findLastIndex((e) => e.case === "thinkingEnd");
    expect(lastThinkingEnd).toBeLessThan(firstText);

    // Next turn: the reasoning item (summary + encrypted_content) goes back verbatim, before the answer text.
    const second = await callThroughMock(llm, route, modelRequest({ route, messages: [question, assistant(assistantMessageOf(first.events)), userText("Thanks!")], spec }), {
      kind: "fixture",
      file: providerFixture("openai-responses", "openai-gpt4omini-text-logprobs.sse"),
    });
    const snapshot = terminalOutput(file);
    const reasoning = snapshot.find((i) => i["type"] === "reasoning") as Json;
    expect(reasoning["encrypted_content"]).toMatch(/^gAAAA/);
    expect(reasoning["summary"].map((part: Json) => part["text"])).toEqual(partsDone);
    const message = snapshot.find((i) => i["type"] === "message") as Json;
    const body2 = second.upstream?.body as Json;
    const input = body2["input"] as Json[];
    expect(input.map((i) => i["type"])).toEqual(["message", "reasoning", "message", "message"]);
    expect(input[1]).toEqual(reasoning);
    expect(input[2]).toEqual({ type: "message", role: "assistant", content: message["content"].map((c: Json) => ({ type: "output_text", text: c["text"], annotations: [] })) });
    expect(body2["reasoning"]).toEqual(body1["reasoning"]);
    expect(historyPrefixOf(first.upstream?.rawBody ?? "", second.upstream?.rawBody ?? "")).toBe(true);
  });
});
