/**
 * The HTTP front across shapes, with the official SDKs as clients and the
 * recorded fixtures as upstream: every (client format, route kind) pair with
 * different shapes, for a text turn (system prompt, usage), a tool round (the
 * call reaches the client, its result reaches the route in the route's own
 * format) and reasoning replay across two calls (the second upstream request
 * carries the first call's replay state byte for byte, though the client
 * could not carry it). Plus parallel tool calls, streamed tool arguments,
 * images, stop reasons, errors and non-streamed answers.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderKind } from "@byok/platform";
import { providerFixture } from "@byok/test-support/fixtures";
import { expectationFor } from "../testing/fixture-oracle.ts";
import { fixturePayloads } from "../testing/fixture-oracle.ts";
import { ROUTES, startInboundKit, type InboundKit } from "../testing/inbound-kit.ts";
import { SseSplitter } from "./sse-splitter.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- SDK and recorded JSON

let kit: InboundKit;
beforeAll(async () => {
  kit = await startInboundKit();
});
afterAll(async () => {
  await kit.stop();
});

const SYSTEM = "You are terse.";
const KINDS: readonly ProviderKind[] = ["openai-chat", "openai-responses", "anthropic"];
const THREE_CALLS = new URL("../../../../tests/fixtures/openai-chat/tools-three-calls-turn1.sse", import.meta.url).pathname;

/** Per route kind: the route and fixtures of each scenario. */
const ROUTE_SIDE: Record<ProviderKind, { plain: string; reasoning: string; text: string; tool1: string; tool2: string; thinking: string }> = {
  "openai-chat": {
    plain: ROUTES.chat,
    reasoning: ROUTES.chatReasoning,
    text: "openai-gpt4o-text-usage.sse",
    tool1: "openai-gpt4omini-tool-call-turn1.sse",
    tool2: "openai-gpt4omini-tool-call-turn2-text.sse",
    thinking: "deepseek-reasoner-reasoning-content.sse",
  },
  "openai-responses": {
    plain: ROUTES.responses,
    reasoning: ROUTES.responsesReasoning,
    text: "openai-gpt4o-function-call-turn2-text.sse",
    tool1: "openai-gpt4o-function-call-turn1.sse",
    tool2: "openai-gpt4o-function-call-turn2-text.sse",
    thinking: "openai-o3mini-reasoning-summary-encrypted.sse",
  },
  anthropic: {
    plain: ROUTES.anthropic,
    reasoning: ROUTES.anthropicThinking,
    text: "anthropic-sonnet45-text.jsonl",
    tool1: "anthropic-sonnet46-tool-use-turn1.sse",
    tool2: "anthropic-sonnet46-tool-result-turn2-text.sse",
    thinking: "anthropic-sonnet4-thinking-signature.sse",
  },
};

interface Turn {
  readonly text: string;
  readonly reasoning: string;
  readonly toolCalls: Array<{ id: string; name: string; args: unknown }>;
  readonly usage: Json | undefined;
  /** What the client puts back into its history for this turn, in its own format. */
  readonly echo: unknown[];
}

type Entry = { role: "user"; text: string } | { role: "assistant"; turn: Turn } | { role: "tool"; id: string; name: string; output: string };

const TOOLS = [
  { name: "get_capital", parameters: { type: "object", properties: { country: { type: "string" } } } },
  { name: "str_replace_based_edit_tool", parameters: { type: "object", properties: { command: { type: "string" } } } },
];

/** The three client formats, driven through their official SDKs (streaming). */
const CLIENTS: Record<ProviderKind, (model: string, history: Entry[]) => Promise<Turn>> = {
  "openai-chat": async (model, history) => {
    const messages: Json[] = [{ role: "system", content: SYSTEM }];
    for (const entry of history) {
      if (entry.role === "user") messages.push({ role: "user", content: entry.text });
      else if (entry.role === "tool") messages.push({ role: "tool", tool_call_id: entry.id, content: entry.output });
      else messages.push(...(entry.turn.echo as Json[]));
    }
    const stream = kit
      .openai()
      .chat.completions.stream({ model, messages: messages as never, stream_options: { include_usage: true }, tools: TOOLS.map((t) => ({ type: "function" as const, function: t })) });
    // The SDK's accumulated message does not add up reasoning_content (not an OpenAI field): the chunks do.
    let reasoning = "";
    stream.on("chunk", (chunk) => (reasoning += ((chunk.choices[0]?.delta ?? {}) as Json)["reasoning_content"] ?? ""));
    const completion = await stream.finalChatCompletion();
    const message = completion.choices[0]?.message as Json;
    const toolCalls = ((message["tool_calls"] ?? []) as Json[]).map((c) => ({ id: c["id"], name: c["function"]["name"], args: JSON.parse(c["function"]["arguments"]) }));
    return {
      text: message["content"] ?? "",
      reasoning,
      toolCalls,
      usage: completion.usage as Json | undefined,
      echo: [{ role: "assistant", content: message["content"] ?? null, ...(message["tool_calls"] ? { tool_calls: message["tool_calls"] } : {}) }],
    };
  },
  "openai-responses": async (model, history) => {
    const input: Json[] = [];
    for (const entry of history) {
      if (entry.role === "user") input.push({ role: "user", content: entry.text });
      else if (entry.role === "tool") input.push({ type: "function_call_output", call_id: entry.id, output: entry.output });
      else input.push(...(entry.turn.echo as Json[]));
    }
    const response = await kit
      .openai()
      .responses.stream({ model, instructions: SYSTEM, input: input as never, store: false, tools: TOOLS.map((t) => ({ type: "function" as const, name: t.name, parameters: t.parameters, strict: false })) })
      .finalResponse();
    const output = response.output as unknown as Json[];
    return {
      text: response.output_text,
      reasoning: output.filter((i) => i["type"] === "reasoning").flatMap((i) => (i["summary"] as Json[]).map((s) => s["text"])).join(""),
      toolCalls: output.filter((i) => i["type"] === "function_call").map((i) => ({ id: i["call_id"], name: i["name"], args: JSON.parse(i["arguments"]) })),
      usage: response.usage as Json | undefined,
      // As Codex does: the output items go back as they came (ids included), minus what only the answer carries.
      echo: output.map((i) => {
        const { status: _status, parsed: _parsed, ...item } = i;
        return i["type"] === "message" ? { ...item, content: (item["content"] as Json[]).map(({ parsed: _p, ...c }) => c) } : item;
      }),
    };
  },
  anthropic: async (model, history) => {
    const messages: Json[] = [];
    for (const entry of history) {
      if (entry.role === "user") messages.push({ role: "user", content: entry.text });
      else if (entry.role === "tool") messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: entry.id, content: entry.output }] });
      else messages.push({ role: "assistant", content: entry.turn.echo });
    }
    const message = await kit
      .anthropic()
      .messages.stream({ model, max_tokens: 4096, system: SYSTEM, messages: messages as never, tools: TOOLS.map((t) => ({ name: t.name, input_schema: t.parameters as never })) })
      .finalMessage();
    const content = message.content as unknown as Json[];
    return {
      text: content.filter((b) => b["type"] === "text").map((b) => b["text"]).join(""),
      reasoning: content.filter((b) => b["type"] === "thinking").map((b) => b["thinking"]).join(""),
      toolCalls: content.filter((b) => b["type"] === "tool_use").map((b) => ({ id: b["id"], name: b["name"], args: b["input"] })),
      usage: message.usage as unknown as Json,
      echo: content.map((b) => (b["type"] === "text" ? { type: "text", text: b["text"] } : b)),
    };
  },
};

function lastUpstream(kind: ProviderKind): Json {
  const request = kit.llm.requestsTo(kind).at(-1);
  if (request === undefined) throw new Error(`no upstream request to ${kind}`);
  return request.body as Json;
}

function systemOf(kind: ProviderKind, body: Json): unknown {
  if (kind === "openai-chat") return body["messages"][0];
  if (kind === "openai-responses") return body["instructions"];
  // Claude routes cache the system prompt: its text sits in a block with cache_control.
  const system = body["system"];
  return Array.isArray(system) ? system.map((block: Json) => block["text"]).join("") : system;
}

function inputTokensOf(client: ProviderKind, usage: Json | undefined): number | undefined {
  if (usage === undefined) return undefined;
  if (client === "openai-chat") return usage["prompt_tokens"];
  if (client === "openai-responses") return usage["input_tokens"];
  return usage["input_tokens"] + (usage["cache_read_input_tokens"] ?? 0) + (usage["cache_creation_input_tokens"] ?? 0);
}

const PAIRS = KINDS.flatMap((client) => KINDS.filter((route) => route !== client).map((route) => [client, route] as const));

describe.each(PAIRS)("%s client on a %s route", (client, routeKind) => {
  const side = ROUTE_SIDE[routeKind];

  it("text turn: the answer, the system prompt upstream, the usage", async () => {
    const file = providerFixture(routeKind, side.text);
    kit.llm.enqueue({ kind: "fixture", file });
    const turn = await CLIENTS[client](side.plain, [{ role: "user", text: "Hello there" }]);
    const expected = expectationFor(routeKind, file);
    expect(turn.text).toBe(expected.text);
    expect(turn.toolCalls).toEqual([]);
    const upstream = lastUpstream(routeKind);
    expect(systemOf(routeKind, upstream)).toEqual(routeKind === "openai-chat" ? { role: "system", content: SYSTEM } : SYSTEM);
    expect(JSON.stringify(upstream)).toContain("Hello there");
    expect(inputTokensOf(client, turn.usage)).toBe(expected.usage?.["inputTokens"]);
  });

  it("tool round: the call reaches the client and its result reaches the route", async () => {
    const file1 = providerFixture(routeKind, side.tool1);
    kit.llm.enqueue({ kind: "fixture", file: file1 });
    const first = await CLIENTS[client](side.plain, [{ role: "user", text: "Capital of France?" }]);
    const expected = expectationFor(routeKind, file1);
    expect(first.toolCalls).toEqual(expected.toolCalls.map((c) => ({ id: c.callId, name: c.name, args: c.arguments })));
    const call = first.toolCalls[0] as Turn["toolCalls"][number];
    const file2 = providerFixture(routeKind, side.tool2);
    kit.llm.enqueue({ kind: "fixture", file: file2 });
    const second = await CLIENTS[client](side.plain, [{ role: "user", text: "Capital of France?" }, { role: "assistant", turn: first }, { role: "tool", id: call.id, name: call.name, output: "Paris" }]);
    expect(second.text).toBe(expectationFor(routeKind, file2).text);
    const upstream = lastUpstream(routeKind);
    if (routeKind === "openai-chat") {
      const messages = upstream["messages"] as Json[];
      expect(messages.find((m) => m["role"] === "assistant")?.["tool_calls"]).toEqual([{ id: call.id, type: "function", function: { name: call.name, arguments: expect.any(String) } }]);
      expect(JSON.parse(messages.find((m) => m["role"] === "assistant")?.["tool_calls"][0].function.arguments)).toEqual(call.args);
      expect(messages.at(-1)).toEqual({ role: "tool", tool_call_id: call.id, content: "Paris" });
    } else if (routeKind === "openai-responses") {
      const input = upstream["input"] as Json[];
      const fc = input.find((i) => i["type"] === "function_call");
      expect(fc).toMatchObject({ call_id: call.id, name: call.name });
      expect(JSON.parse(fc?.["arguments"])).toEqual(call.args);
      expect(input.at(-1)).toEqual({ type: "function_call_output", call_id: call.id, output: "Paris" });
    } else {
      const messages = upstream["messages"] as Json[];
      const assistant = messages.find((m) => m["role"] === "assistant");
      expect(assistant?.["content"]).toContainEqual({ type: "tool_use", id: call.id, name: call.name, input: call.args });
      expect(messages.at(-1)).toEqual({ role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "Paris" }] });
    }
  });

  it("reasoning replay: the second upstream request carries the first call's replay state byte for byte", async () => {
    const file = providerFixture(routeKind, side.thinking);
    kit.llm.enqueue({ kind: "fixture", file });
    const first = await CLIENTS[client](side.reasoning, [{ role: "user", text: "Think first." }]);
    const expected = expectationFor(routeKind, file);
    if (expected.thinking !== "") expect(first.reasoning).toBe(expected.thinking);
    kit.llm.enqueue({ kind: "fixture", file: providerFixture(routeKind, side.text) });
    await CLIENTS[client](side.reasoning, [{ role: "user", text: "Think first." }, { role: "assistant", turn: first }, { role: "user", text: "And now?" }]);
    const upstream = kit.llm.requestsTo(routeKind).at(-1);
    const body = upstream?.body as Json;
    if (routeKind === "openai-chat") {
      const assistant = (body["messages"] as Json[]).find((m) => m["role"] === "assistant");
      expect(assistant?.["reasoning_content"]).toBe(expected.thinking);
    } else if (routeKind === "openai-responses") {
      const reasoning = (body["input"] as Json[]).filter((i) => i["type"] === "reasoning");
      expect(reasoning).toEqual(expected.replayItems);
      for (const item of expected.replayItems) expect(upstream?.rawBody).toContain(JSON.stringify((item as Json)["encrypted_content"]));
    } else {
      const assistant = (body["messages"] as Json[]).find((m) => m["role"] === "assistant");
      const thinking = (assistant?.["content"] as Json[]).filter((b) => b["type"] === "thinking" || b["type"] === "redacted_thinking");
      expect(thinking).toEqual(expected.replayItems);
      for (const item of expected.replayItems) expect(upstream?.rawBody).toContain(JSON.stringify((item as Json)["signature"]));
    }
  });
});

describe("translation details", () => {
  it("parallel tool calls from a chat route reach an Anthropic client as one block after another, arguments streamed", async () => {
    kit.llm.enqueue({ kind: "fixture", file: THREE_CALLS });
    const stream = kit.anthropic().messages.stream({ model: ROUTES.chat, max_tokens: 1000, messages: [{ role: "user", content: "look" }] });
    let jsonDeltas = 0;
    stream.on("streamEvent", (event) => {
      if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") jsonDeltas++;
    });
    const message = await stream.finalMessage();
    const calls = message.content.filter((b) => b.type === "tool_use");
    expect(calls).toHaveLength(3);
    expect(message.stop_reason).toBe("tool_use");
    expect(jsonDeltas).toBeGreaterThan(3);
    const expected = expectationFor("openai-chat", THREE_CALLS).toolCalls;
    expect(calls.map((c) => (c.type === "tool_use" ? c.input : null))).toEqual(expected.map((c) => c.arguments));
  });

  it("parallel tool calls reach a Responses client as function_call items", async () => {
    kit.llm.enqueue({ kind: "fixture", file: THREE_CALLS });
    const response = await kit.openai().responses.stream({ model: ROUTES.chat, input: "look" }).finalResponse();
    expect(response.output.filter((i) => i.type === "function_call")).toHaveLength(3);
  });

  it("an image of a chat client reaches an Anthropic route as a base64 block", async () => {
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet45-text.jsonl") });
    const png = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
    await kit.openai().chat.completions.create({ model: ROUTES.anthropic, messages: [{ role: "user", content: [{ type: "text", text: "what is it" }, { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }] }] });
    const content = (lastUpstream("anthropic")["messages"] as Json[])[0]?.["content"];
    expect(content).toEqual([{ type: "text", text: "what is it" }, { type: "image", source: { type: "base64", media_type: "image/png", data: png } }]);
  });

  it("the output limit is a normal stop: max_tokens for Anthropic, length for chat, incomplete for Responses", async () => {
    const file = providerFixture("openai-chat", "deepseek-chat-length-usage-on-final-chunk.jsonl");
    kit.llm.enqueue({ kind: "fixture", file });
    const message = await kit.anthropic().messages.stream({ model: ROUTES.chat, max_tokens: 50, messages: [{ role: "user", content: "long" }] }).finalMessage();
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.content.map((b) => (b.type === "text" ? b.text : "")).join("")).toBe(expectationFor("openai-chat", file).text);
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet46-max-tokens-cache-write.jsonl") });
    const completion = await kit.openai().chat.completions.create({ model: ROUTES.anthropic, messages: [{ role: "user", content: "long" }] });
    expect(completion.choices[0]?.finish_reason).toBe("length");
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet46-max-tokens-cache-write.jsonl") });
    const response = await kit.openai().responses.create({ model: ROUTES.anthropic, input: "long" });
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details?.reason).toBe("max_output_tokens");
  });

  it("non-streamed answers in each format", async () => {
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("openai-responses", "openai-gpt4o-function-call-turn1.sse") });
    const message = await kit.anthropic().messages.create({ model: ROUTES.responses, max_tokens: 100, messages: [{ role: "user", content: "capital?" }] });
    expect(message).toMatchObject({ type: "message", stop_reason: "tool_use", content: [expect.objectContaining({ type: "tool_use", name: "get_capital" })] });
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet45-text.jsonl") });
    const response = await kit.openai().responses.create({ model: ROUTES.anthropic, input: "hi" });
    expect(response.output_text).toBe(expectationFor("anthropic", providerFixture("anthropic", "anthropic-sonnet45-text.jsonl")).text);
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("openai-responses", "openai-gpt4o-function-call-turn2-text.sse") });
    const completion = await kit.openai().chat.completions.create({ model: ROUTES.responses, messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices[0]?.message.content).toBe(expectationFor("openai-responses", providerFixture("openai-responses", "openai-gpt4o-function-call-turn2-text.sse")).text);
  });

  it("errors before the first byte in the client's format; after it as the format's stream error", async () => {
    kit.llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 429, retryAfter: "3", body: { error: { message: "slow", type: "rate_limit_error" } } });
    const limited = await kit.anthropic().messages.create({ model: ROUTES.chat, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers?.get("retry-after")).toBe("3");
    kit.llm.enqueue({ kind: "error", endpoint: "anthropic", status: 500, body: { type: "error", error: { type: "api_error", message: "boom" } } });
    const broken = await kit.openai().responses.create({ model: ROUTES.anthropic, input: "x" }).catch((e: unknown) => e);
    expect((broken as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"), disconnectAfterEvents: 6 });
    const cut = await kit.anthropic().messages.stream({ model: ROUTES.chat, max_tokens: 10, messages: [{ role: "user", content: "x" }] }).finalMessage().catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(Anthropic.APIError);
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("anthropic", "anthropic-overloaded-error-midstream.handwritten.sse") });
    const overloaded = await kit.openai().responses.stream({ model: ROUTES.anthropic, input: "x" }).finalResponse().catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(OpenAI.APIError);
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("anthropic", "anthropic-overloaded-error-midstream.handwritten.sse") });
    const chatStream = await kit.openai().chat.completions.create({ model: ROUTES.anthropic, messages: [{ role: "user", content: "x" }], stream: true });
    const chatError = await (async () => {
      for await (const chunk of chatStream) void chunk;
    })().catch((e: unknown) => e);
    expect(chatError).toBeInstanceOf(OpenAI.APIError);
  });

  it("count_tokens on a route of another kind answers an estimate", async () => {
    const count = await kit.anthropic().messages.countTokens({ model: ROUTES.chat, system: "a".repeat(400), messages: [{ role: "user", content: "b".repeat(400) }] });
    expect(count.input_tokens).toBe(200);
  });
});

describe("no buffering on the translated path", () => {
  it("an Anthropic client on a chat route has the text of upstream event k while the mock holds event k+1, for every k", async () => {
    const file = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
    const payloads = fixturePayloads(file);
    const textAfter = (k: number): string =>
      payloads
        .slice(0, k)
        .map((p) => (p["choices"]?.[0]?.delta?.content as string | undefined) ?? "")
        .join("");
    for (let k = 1; k < payloads.length; k++) {
      const expected = textAfter(k);
      const handle = kit.llm.enqueue({ kind: "fixture", file, holdAfterEvents: k });
      const response = await kit.fetch("/v1/messages", { body: { model: ROUTES.chat, stream: true, max_tokens: 100, messages: [{ role: "user", content: "x" }] } });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const splitter = new SseSplitter();
      const decoder = new TextDecoder();
      let text = "";
      await handle.held;
      // The mock sent k events and waits; the text they carried must already be at the client.
      while (text.length < expected.length) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended with ${JSON.stringify(text)} of ${JSON.stringify(expected)}`);
        for (const event of splitter.push(decoder.decode(value, { stream: true }))) {
          const data = JSON.parse(event.data) as Json;
          if (data["type"] === "content_block_delta" && data["delta"]["type"] === "text_delta") text += data["delta"]["text"];
        }
      }
      expect(text).toBe(expected);
      handle.release();
      while (!(await reader.read()).done);
    }
  });
});
