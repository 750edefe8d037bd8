/**
 * The HTTP front's same-shape path with the official SDKs as clients and the
 * recorded fixtures as upstream (mock LLM): per endpoint, text, tool calls,
 * parallel tool calls, reasoning, errors before and after the first byte, the
 * minimal change of the upstream request, and a relay that buffers nothing
 * (the client has event k while the mock holds event k+1 back).
 */
import { request as httpRequest } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerFixture } from "@byok/test-support/fixtures";
import type { MockEndpoint } from "@byok/test-support/mock-llm";
import { readRecording } from "../replay/recording.ts";
import { expectationFor } from "../testing/fixture-oracle.ts";
import { MEMBER_KEY, ROUTES, startInboundKit, type InboundKit } from "../testing/inbound-kit.ts";
import { SseSplitter } from "./sse-splitter.ts";

let kit: InboundKit;
beforeAll(async () => {
  kit = await startInboundKit();
});
afterAll(async () => {
  await kit.stop();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- request bodies as the mock recorded them

const THREE_CALLS = new URL("../../../../tests/fixtures/openai-chat/tools-three-calls-turn1.sse", import.meta.url).pathname;

describe("chat completions, same shape", () => {
  it("streams a text answer as recorded, with only the model name changed and usage asked for", async () => {
    const file = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
    kit.llm.enqueue({ kind: "fixture", file });
    const params = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "What's the weather?" }], temperature: 0.2, stream: true as const };
    const stream = await kit.openai().chat.completions.create(params);
    let text = "";
    const chunks: unknown[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(text).toBe(expectationFor("openai-chat", file).text);
    // The usage chunk the gateway asked for is not passed to a client that did not ask.
    expect(chunks.some((c) => (c as Json)["choices"]?.length === 0)).toBe(false);
    const upstream = kit.llm.requests.at(-1)?.body as Json;
    expect(upstream).toEqual({ ...params, model: "gpt-4o-mini", stream_options: { include_usage: true } });
    expect(kit.llm.requests.at(-1)?.headers["authorization"]).not.toContain(MEMBER_KEY);
  });

  it("passes the usage chunk to a client that asked for it", async () => {
    const file = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
    kit.llm.enqueue({ kind: "fixture", file });
    const stream = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "hi" }], stream: true, stream_options: { include_usage: true } });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: expectationFor("openai-chat", file).usage?.["inputTokens"] });
  });

  it("streams tool calls, three in parallel, with their arguments", async () => {
    kit.llm.enqueue({ kind: "fixture", file: THREE_CALLS });
    const runner = kit.openai().chat.completions.stream({ model: ROUTES.chat, messages: [{ role: "user", content: "look" }], tools: [{ type: "function", function: { name: "read_file", parameters: { type: "object" } } }] });
    const completion = await runner.finalChatCompletion();
    const calls = completion.choices[0]?.message.tool_calls ?? [];
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => (c.type === "function" ? JSON.parse(c.function.arguments) : null)).every((a) => typeof a === "object" && a !== null)).toBe(true);
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("passes reasoning_content through", async () => {
    const file = providerFixture("openai-chat", "deepseek-reasoner-reasoning-content.sse");
    kit.llm.enqueue({ kind: "fixture", file });
    const stream = await kit.openai().chat.completions.create({ model: ROUTES.chatReasoning, messages: [{ role: "user", content: "9.11 vs 9.8?" }], stream: true });
    let reasoning = "";
    for await (const chunk of stream) reasoning += ((chunk.choices[0]?.delta ?? {}) as Json)["reasoning_content"] ?? "";
    expect(reasoning).toBe(expectationFor("openai-chat", file).thinking);
  });

  it("relays a non-streamed answer", async () => {
    const body = { id: "chatcmpl-1", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "pong" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
    kit.llm.enqueue({ kind: "json", endpoint: "openai-chat", body });
    const completion = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "ping" }] });
    expect(completion).toMatchObject(body);
    expect((kit.llm.requests.at(-1)?.body as Json)["stream_options"]).toBeUndefined();
  });

  it("answers upstream errors before the first byte in the OpenAI format with the right status", async () => {
    kit.llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 429, retryAfter: "7", body: { error: { message: "slow down", type: "rate_limit_error", code: "rate_limit_exceeded" } } });
    const limited = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "x" }], stream: true }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).message).toContain("slow down");
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers?.get("retry-after")).toBe("7");
    kit.llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 500, body: { error: { message: "boom", type: "server_error" } } });
    const broken = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect((broken as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    kit.llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 400, body: { error: { message: "messages[0].content is bad", type: "invalid_request_error", param: "messages" } } });
    const invalid = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect((invalid as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
  });

  it("ends a stream cut after the first byte with an error the SDK raises", async () => {
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"), disconnectAfterEvents: 5 });
    const stream = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "x" }], stream: true });
    let text = "";
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(text.length).toBeGreaterThan(0);
  });

  it("passes an in-stream provider error on as the provider sent it", async () => {
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "groq-gptoss120b-in-stream-error-event.sse") });
    const stream = await kit.openai().chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "x" }], stream: true });
    const error = await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
  });
});

describe("responses, same shape", () => {
  it("streams a function call and the reasoning items as recorded", async () => {
    const file = providerFixture("openai-responses", "openai-gpt5-reasoning-encrypted-forced-function-call.sse");
    kit.llm.enqueue({ kind: "fixture", file });
    const response = await kit
      .openai()
      .responses.stream({ model: ROUTES.responsesReasoning, input: "weather?", store: false, include: ["reasoning.encrypted_content"], tools: [{ type: "function", name: "get_weather", parameters: { type: "object" }, strict: false }] })
      .finalResponse();
    const expected = expectationFor("openai-responses", file);
    const reasoning = response.output.filter((i) => i.type === "reasoning");
    expect(reasoning).toEqual(expected.replayItems.map((item) => expect.objectContaining({ id: (item as Json)["id"], encrypted_content: (item as Json)["encrypted_content"] })));
    const call = response.output.find((i) => i.type === "function_call");
    expect(call?.type === "function_call" && call.name).toBe(expected.toolCalls[0]?.name);
    expect((kit.llm.requests.at(-1)?.body as Json)["model"]).toBe("gpt-5");
  });

  it("leaves out reasoning items the gateway made up for another shape", async () => {
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("openai-responses", "openai-gpt4o-function-call-turn2-text.sse") });
    await kit
      .openai()
      .responses.create({
        model: ROUTES.responses,
        stream: true,
        input: [
          { role: "user", content: "hi" },
          { type: "reasoning", id: "rs_byokgw_abc0000", summary: [{ type: "summary_text", text: "thought" }] },
          { role: "assistant", content: "hello" },
          { role: "user", content: "again" },
        ],
      })
      .then(async (s) => {
        for await (const e of s) void e;
      });
    expect(((kit.llm.requests.at(-1)?.body as Json)["input"] as Json[]).map((i) => i["type"] ?? i["role"])).toEqual(["user", "assistant", "user"]);
  });

  it("answers an upstream rate limit before the first byte with 429 and its Retry-After", async () => {
    kit.llm.enqueue({ kind: "error", endpoint: "openai-responses", status: 429, retryAfter: "2", body: { error: { message: "quota", type: "rate_limit_error", code: "rate_limit_exceeded" } } });
    const error = await kit.openai().responses.create({ model: ROUTES.responses, input: "x", stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers?.get("retry-after")).toBe("2");
  });

  it("raises an in-stream error of the endpoint", async () => {
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("openai-responses", "openai-gpt5nano-error-then-response-failed.jsonl") });
    const error = await kit.openai().responses.stream({ model: ROUTES.responses, input: "x" }).finalResponse().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
  });
});

describe("messages, same shape", () => {
  it("streams thinking with its signature byte for byte, passing anthropic-beta and ?beta=true", async () => {
    const file = providerFixture("anthropic", "anthropic-sonnet4-thinking-signature.sse");
    kit.llm.enqueue({ kind: "fixture", file });
    const message = await kit
      .anthropic()
      .beta.messages.stream({ model: ROUTES.anthropicThinking, max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "prime?" }], betas: ["interleaved-thinking-2025-05-14", "some-future-beta"] })
      .finalMessage();
    const expected = expectationFor("anthropic", file);
    expect(message.content.filter((b) => b.type === "thinking")).toEqual(expected.replayItems);
    const upstream = kit.llm.requests.at(-1);
    expect(upstream?.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14,some-future-beta");
    expect(upstream?.path).toBe("/v1/messages");
    expect((upstream?.body as Json)["model"]).toBe("claude-upstream-b");
    expect(upstream?.headers["x-api-key"]).not.toBe(MEMBER_KEY);
  });

  it("streams a tool call; Bearer auth (Claude Code's ANTHROPIC_AUTH_TOKEN) works too", async () => {
    const file = providerFixture("anthropic", "anthropic-sonnet46-tool-use-turn1.sse");
    kit.llm.enqueue({ kind: "fixture", file });
    const message = await kit.anthropic({ authToken: MEMBER_KEY }).messages.stream({ model: "claude-sonnet-4-5-20250929", max_tokens: 1024, messages: [{ role: "user", content: "edit" }] }).finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.find((b) => b.type === "tool_use")).toMatchObject({ name: expectationFor("anthropic", file).toolCalls[0]?.name });
  });

  it("streams parallel tool_use blocks (a synthetic stream: no recording has two)", async () => {
    const block = (index: number, id: string) => [
      { type: "content_block_start", index, content_block: { type: "tool_use", id, name: "read_file", input: {} } },
      { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: '{"path":' } },
      { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: `"${id}.ts"}` } },
      { type: "content_block_stop", index },
    ];
    kit.llm.enqueue({
      kind: "chunks",
      endpoint: "anthropic",
      chunks: [
        { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } },
        ...block(0, "toolu_a"),
        ...block(1, "toolu_b"),
        { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 20 } },
        { type: "message_stop" },
      ],
    });
    const message = await kit.anthropic().messages.stream({ model: ROUTES.anthropic, max_tokens: 100, messages: [{ role: "user", content: "read both" }] }).finalMessage();
    expect(message.content).toEqual([
      { type: "tool_use", id: "toolu_a", name: "read_file", input: { path: "toolu_a.ts" } },
      { type: "tool_use", id: "toolu_b", name: "read_file", input: { path: "toolu_b.ts" } },
    ]);
  });

  it("raises an error event in the middle of the stream", async () => {
    kit.llm.enqueue({ kind: "fixture", file: providerFixture("anthropic", "anthropic-overloaded-error-midstream.handwritten.sse") });
    const error = await kit.anthropic().messages.stream({ model: ROUTES.anthropic, max_tokens: 100, messages: [{ role: "user", content: "x" }] }).finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
  });

  it("answers upstream overload before the first byte with 503 in the Anthropic format", async () => {
    kit.llm.enqueue({ kind: "error", endpoint: "anthropic", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
    const error = await kit.anthropic().messages.create({ model: ROUTES.anthropic, max_tokens: 100, messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: "error", error: { type: "overloaded_error" } });
  });

  it("relays count_tokens to the endpoint", async () => {
    kit.llm.enqueue({ kind: "json", endpoint: "anthropic", path: "/v1/messages/count_tokens", body: { input_tokens: 42 } });
    const count = await kit.anthropic().messages.countTokens({ model: ROUTES.anthropic, messages: [{ role: "user", content: "count me" }] });
    expect(count.input_tokens).toBe(42);
    expect(kit.llm.requests.at(-1)?.path).toBe("/v1/messages/count_tokens");
  });
});

describe("requests the gateway answers itself", () => {
  it("lists the models in the OpenAI and the Anthropic shape", async () => {
    const openai = await kit.openai().models.list();
    expect(openai.data.map((m) => m.id)).toContain(ROUTES.chat);
    const anthropic = await kit.anthropic().models.list();
    expect(anthropic.data.map((m) => m.id)).toContain(ROUTES.anthropic);
    expect(anthropic.data[0]).toMatchObject({ type: "model", display_name: expect.any(String) });
  });

  it("401 for a bad or missing key, in both formats and both header styles", async () => {
    await expect(kit.openai("wrong").chat.completions.create({ model: ROUTES.chat, messages: [{ role: "user", content: "x" }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(kit.anthropic({ key: "wrong" }).messages.create({ model: ROUTES.chat, max_tokens: 10, messages: [{ role: "user", content: "x" }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const missing = await fetch(`${kit.url}/v1/messages`, { method: "POST", body: "{}", headers: { "anthropic-version": "2023-06-01" } });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });

  it("404 for an unknown model, 400 naming the field", async () => {
    const unknown = await kit.openai().chat.completions.create({ model: "gpt-nope", messages: [{ role: "user", content: "x" }] }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found");
    const bad = await kit.fetch("/v1/chat/completions", { body: { model: ROUTES.chat, messages: "hi" } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: "messages", type: "invalid_request_error" } });
    const badCross = await kit.fetch("/v1/messages", { body: { model: ROUTES.chat, max_tokens: 10, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "http://x/y.png" } }] }] } });
    expect(badCross.status).toBe(400);
    expect(await badCross.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error", message: expect.stringContaining("messages.0.content.0.source.type") } });
  });

  it("asks the store once per key while the key is cached", async () => {
    const before = kit.verifyCalls();
    await kit.openai().models.list();
    await kit.openai().models.list();
    expect(kit.verifyCalls() - before).toBeLessThanOrEqual(1);
  });
});

describe("request bodies over the limit", () => {
  it("413 in the client's format, whether the size is declared or only seen while reading", async () => {
    const small = await startInboundKit({ env: { INBOUND_MAX_BODY_BYTES: "4096" } });
    try {
      const body = JSON.stringify({ model: ROUTES.chat, messages: [{ role: "user", content: "x".repeat(10_000) }] });
      const declared = await small.fetch("/v1/chat/completions", { body });
      expect(declared.status).toBe(413);
      expect(await declared.json()).toMatchObject({ error: { code: "request_too_large", type: "invalid_request_error" } });
      // Chunked, no content-length: the limit is seen while reading, and the answer still arrives.
      const url = new URL(`${small.url}/v1/messages`);
      const streamed = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(url, { method: "POST", headers: { "x-api-key": MEMBER_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on("error", reject);
        for (let i = 0; i < 10; i++) req.write(body.slice(i * 1_000, (i + 1) * 1_000));
        req.end(body.slice(10_000));
      });
      expect(streamed.status).toBe(413);
      expect(JSON.parse(streamed.text)).toMatchObject({ type: "error", error: { type: "request_too_large" } });
    } finally {
      await small.stop();
    }
  });
});

describe("no buffering on the same-shape path", () => {
  const cases: ReadonlyArray<readonly [MockEndpoint, string, string, Json]> = [
    // With include_usage asked for, every upstream event is passed on (else the usage chunk is left out).
    ["openai-chat", "openai-gpt4o-text-usage.sse", "/v1/chat/completions", { model: ROUTES.chat, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "x" }] }],
    ["openai-responses", "openai-gpt4o-function-call-turn1.sse", "/v1/responses", { model: ROUTES.responses, stream: true, input: "x" }],
    ["anthropic", "anthropic-sonnet46-tool-use-turn1.sse", "/v1/messages", { model: ROUTES.anthropic, stream: true, max_tokens: 100, messages: [{ role: "user", content: "x" }] }],
  ];
  for (const [endpoint, name, path, body] of cases) {
    it(`${endpoint}: the client has event k while the mock holds event k+1, for every k`, async () => {
      const file = providerFixture(endpoint, name);
      const total = readRecording(file, endpoint).length;
      expect(total).toBeGreaterThan(5);
      for (let k = 1; k < total; k++) {
        const handle = kit.llm.enqueue({ kind: "fixture", file, holdAfterEvents: k });
        const response = await kit.fetch(path, { body });
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const splitter = new SseSplitter();
        const decoder = new TextDecoder();
        let received = 0;
        await handle.held;
        // The mock has sent k events and waits: all k must reach the client now.
        while (received < k) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended after ${received} of ${k} events`);
          received += splitter.push(decoder.decode(value, { stream: true })).length;
        }
        expect(received).toBe(k);
        handle.release();
        while (!(await reader.read()).done);
      }
    });
  }
});

describe("a client slower than the upstream", () => {
  it("gets a stream of events larger than the socket buffers whole and in order (the upstream waits while the client drains)", async () => {
    const filler = "x".repeat(64 * 1024);
    const events = Array.from(
      { length: 200 },
      (_, i) => `data: ${JSON.stringify({ id: "chatcmpl-big", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content: `${i}:${filler}` }, finish_reason: null }] })}\n\n`,
    );
    const sse = `${events.join("")}data: ${JSON.stringify({ id: "chatcmpl-big", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [], usage: { prompt_tokens: 3, completion_tokens: 200, total_tokens: 203 } })}\n\ndata: [DONE]\n\n`;
    kit.llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: sse });
    const response = await kit.fetch("/v1/chat/completions", { body: { model: ROUTES.chat, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "x" }] } });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      // A slow reader: the gateway's writes back up, so it has to hold the upstream until the client drains.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(text.length).toBe(sse.length);
    expect(text === sse).toBe(true);
  });
});

describe("the listener's health", () => {
  it("answers GET /healthz without a key (the Kubernetes probes), and nothing else without one", async () => {
    const health = await fetch(`${kit.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("ok\n");
    expect((await fetch(`${kit.url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${kit.url}/healthz`, { method: "POST" })).status).toBe(404);
  });
});
