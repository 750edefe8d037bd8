/**
 * Request building on all three endpoints: ModelSpec mapped to each endpoint's
 * own parameters, values a route cannot take refused as CONFIG (never
 * dropped), typed history projected per endpoint, byte-identical bodies for
 * identical requests, and replay state used only where it belongs.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ToolDefinitionSchema } from "@byok/contracts";
import { describe, expect, it } from "vitest";
import { providerFixture } from "@byok/test-support/fixtures";
import { assistant, FIXTURE_KINDS, modelRequest, NO_UPSTREAM, prepareBody, recordedRequest, testRoute, toolResult, userText, type MessageInit } from "../testing/call-kit.ts";
import { create } from "@bufbuild/protobuf";
import { AssistantMessageSchema } from "@byok/contracts";
import { encodeReplay } from "./replay-codec.ts";

const tools: Array<MessageInitShape<typeof ToolDefinitionSchema>> = [
  { name: "read_file", description: "Read a file", parametersJson: '{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}' },
];

function ready(result: ReturnType<typeof prepareBody>): Record<string, any> { // eslint-disable-line @typescript-eslint/no-explicit-any -- endpoint JSON
  if (result.kind !== "ready") throw new Error(`rejected: ${result.message}`);
  return result.body;
}

const twoCalls = create(AssistantMessageSchema, {
  content: [
    { part: { case: "text", value: { text: "Reading both." } } },
    { part: { case: "toolCall", value: { callId: "call_a", name: "read_file", argumentsJson: '{"path":"a.ts"}' } } },
    { part: { case: "toolCall", value: { callId: "call_b", name: "read_file", argumentsJson: '{"path":"b.ts"}' } } },
  ],
});
const toolRound: MessageInit[] = [userText("read a and b"), assistant(twoCalls), toolResult("call_a", "read_file", "A"), toolResult("call_b", "read_file", "B")];

describe("ModelSpec mapping", () => {
  it("maps effort and max output to each endpoint's own parameters", () => {
    const spec = { effort: "high", maxOutputTokens: 2048 };
    const chat = ready(prepareBody(testRoute("openai-chat", NO_UPSTREAM, { efforts: ["low", "high"] }), modelRequest({ route: testRoute("openai-chat", NO_UPSTREAM), messages: [userText("hi")], spec })));
    expect(chat).toMatchObject({ reasoning_effort: "high", max_completion_tokens: 2048 });
    const responsesRoute = testRoute("openai-responses", NO_UPSTREAM, { efforts: ["low", "high"], supportsThinking: true });
    expect(ready(prepareBody(responsesRoute, modelRequest({ route: responsesRoute, messages: [userText("hi")], spec })))).toMatchObject({
      reasoning: { effort: "high" },
      max_output_tokens: 2048,
      include: ["reasoning.encrypted_content"],
      store: false,
    });
    const anthropicRoute = testRoute("anthropic", NO_UPSTREAM, { efforts: ["low", "high"], supportsThinking: true });
    expect(ready(prepareBody(anthropicRoute, modelRequest({ route: anthropicRoute, messages: [userText("hi")], spec })))).toMatchObject({
      thinking: { type: "adaptive" },
      output_config: { effort: "high" },
      max_tokens: 2048,
    });
  });

  it("falls back to the model's configured effort and output limit, and sends none when neither exists", () => {
    const configured = testRoute("openai-chat", NO_UPSTREAM, { efforts: ["medium"], effort: "medium", maxOutputTokens: 999 });
    expect(ready(prepareBody(configured, modelRequest({ route: configured, messages: [userText("hi")] })))).toMatchObject({ reasoning_effort: "medium", max_completion_tokens: 999 });
    const bare = testRoute("openai-chat", NO_UPSTREAM, { maxOutputTokens: undefined });
    const body = ready(prepareBody(bare, modelRequest({ route: bare, messages: [userText("hi")] })));
    expect(body).not.toHaveProperty("reasoning_effort");
    expect(body).not.toHaveProperty("max_completion_tokens");
  });

  it("uses budgeted thinking where configured, and disables thinking for effort none", () => {
    const budget = testRoute("anthropic", NO_UPSTREAM, { supportsThinking: true, thinkingBudgetTokens: 1024, efforts: ["none", "low"] });
    expect(ready(prepareBody(budget, modelRequest({ route: budget, messages: [userText("hi")] })))).toMatchObject({ thinking: { type: "enabled", budget_tokens: 1024 } });
    const off = ready(prepareBody(budget, modelRequest({ route: budget, messages: [userText("hi")], spec: { effort: "none" } })));
    expect(off["thinking"]).toEqual({ type: "disabled" });
    expect(off).not.toHaveProperty("output_config");
  });

  it("responses: sends the model's reasoningSummary as reasoning.summary after the effort, laid out like the recorded o3-mini request", () => {
    const recorded = recordedRequest(providerFixture("openai-responses", "openai-o3mini-reasoning-summary-encrypted.request.json")).body;
    const route = testRoute("openai-responses", NO_UPSTREAM, { upstreamModel: recorded["model"], supportsThinking: true, efforts: ["low", "high"], reasoningSummary: "detailed" });
    const build = () => JSON.stringify(ready(prepareBody(route, modelRequest({ route, system: "sys", tools, messages: toolRound, spec: { effort: "high" } }))));
    const body = JSON.parse(build()) as Record<string, unknown>;
    expect(JSON.stringify(body["reasoning"])).toBe(JSON.stringify(recorded["reasoning"]));
    expect(body["include"]).toEqual(recorded["include"]);
    expect(build()).toBe(build());

    const summaryOnly = testRoute("openai-responses", NO_UPSTREAM, { supportsThinking: true, reasoningSummary: "auto" });
    expect(ready(prepareBody(summaryOnly, modelRequest({ route: summaryOnly, messages: [userText("hi")] })))["reasoning"]).toEqual({ summary: "auto" });

    const unset = testRoute("openai-responses", NO_UPSTREAM, { supportsThinking: true, efforts: ["high"] });
    expect(ready(prepareBody(unset, modelRequest({ route: unset, messages: [userText("hi")], spec: { effort: "high" } })))["reasoning"]).toEqual({ effort: "high" });
    expect(ready(prepareBody(unset, modelRequest({ route: unset, messages: [userText("hi")] })))).not.toHaveProperty("reasoning");
  });

  const refusals: Array<[string, () => ReturnType<typeof prepareBody>, RegExp]> = [
    ["an effort the model does not list", () => {
      const route = testRoute("openai-responses", NO_UPSTREAM, { efforts: ["low"] });
      return prepareBody(route, modelRequest({ route, messages: [userText("hi")], spec: { effort: "xhigh" } }));
    }, /effort "xhigh" is not supported/],
    ["an effort on a model without efforts", () => {
      const route = testRoute("openai-chat", NO_UPSTREAM);
      return prepareBody(route, modelRequest({ route, messages: [userText("hi")], spec: { effort: "low" } }));
    }, /takes no effort/],
    ["more output tokens than the model allows", () => {
      const route = testRoute("openai-chat", NO_UPSTREAM, { maxOutputTokens: 100 });
      return prepareBody(route, modelRequest({ route, messages: [userText("hi")], spec: { maxOutputTokens: 101 } }));
    }, /exceeds the model limit/],
    ["fast mode", () => {
      const route = testRoute("openai-chat", NO_UPSTREAM);
      return prepareBody(route, modelRequest({ route, messages: [userText("hi")], spec: { fast: true } }));
    }, /fast/],
    ["Anthropic without any max_tokens", () => {
      const route = testRoute("anthropic", NO_UPSTREAM, { maxOutputTokens: undefined });
      return prepareBody(route, modelRequest({ route, messages: [userText("hi")] }));
    }, /max_tokens/],
    ["a thinking budget not below max_tokens", () => {
      const route = testRoute("anthropic", NO_UPSTREAM, { supportsThinking: true, thinkingBudgetTokens: 4096, maxOutputTokens: 8000 });
      return prepareBody(route, modelRequest({ route, messages: [userText("hi")], spec: { maxOutputTokens: 2000 } }));
    }, /budget/],
    ["an image for a model without image support", () => {
      const route = testRoute("anthropic", NO_UPSTREAM);
      return prepareBody(route, modelRequest({ route, messages: [{ body: { case: "user", value: { content: [{ part: { case: "image", value: { mimeType: "image/png", data: new Uint8Array([1]) } } }] } } }] }));
    }, /images/],
  ];
  for (const [what, attempt, message] of refusals) {
    it(`refuses ${what} as a configuration error`, () => {
      const result = attempt();
      expect(result).toMatchObject({ kind: "rejected", rejection: "config" });
      expect(result.kind === "rejected" ? result.message : "").toMatch(message);
    });
  }

  it("refuses tool arguments in history that are not JSON as an invalid request", () => {
    for (const kind of FIXTURE_KINDS) {
      const route = testRoute(kind, NO_UPSTREAM);
      const broken = create(AssistantMessageSchema, { content: [{ part: { case: "toolCall", value: { callId: "c", name: "f", argumentsJson: '{"a":' } } }] });
      expect(prepareBody(route, modelRequest({ route, messages: [userText("x"), assistant(broken)] }))).toMatchObject({ kind: "rejected", rejection: "invalid_request" });
    }
  });
});

describe("history projection", () => {
  it("builds byte-identical bodies for identical requests, with the history last", () => {
    for (const kind of FIXTURE_KINDS) {
      const route = testRoute(kind, NO_UPSTREAM);
      const build = () => JSON.stringify(ready(prepareBody(route, modelRequest({ route, system: "sys", tools, messages: toolRound }))));
      const body = build();
      expect(build()).toBe(body);
      expect(body.endsWith("]}")).toBe(true);
      expect(body).not.toMatch(/run-1|conversation-1|member-1/);
    }
  });

  it("chat: one assistant message with all tool calls, then one tool message per result", () => {
    const route = testRoute("openai-chat", NO_UPSTREAM);
    const body = ready(prepareBody(route, modelRequest({ route, system: "sys", tools, messages: toolRound })));
    expect(body["messages"]).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "read a and b" },
      {
        role: "assistant",
        content: "Reading both.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"a.ts"}' } },
          { id: "call_b", type: "function", function: { name: "read_file", arguments: '{"path":"b.ts"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "A" },
      { role: "tool", tool_call_id: "call_b", content: "B" },
    ]);
    expect(body["tools"]).toEqual([{ type: "function", function: { name: "read_file", description: "Read a file", parameters: JSON.parse(tools[0]?.parametersJson ?? "") } }]);
  });

  it("responses: message, function_call items, function_call_output items", () => {
    const route = testRoute("openai-responses", NO_UPSTREAM);
    const body = ready(prepareBody(route, modelRequest({ route, system: "sys", tools, messages: toolRound })));
    expect(body["instructions"]).toBe("sys");
    expect(body["input"]).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "read a and b" }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Reading both.", annotations: [] }] },
      { type: "function_call", call_id: "call_a", name: "read_file", arguments: '{"path":"a.ts"}' },
      { type: "function_call", call_id: "call_b", name: "read_file", arguments: '{"path":"b.ts"}' },
      { type: "function_call_output", call_id: "call_a", output: "A" },
      { type: "function_call_output", call_id: "call_b", output: "B" },
    ]);
  });

  it("anthropic: tool results of one round in one user message, in arrival order; is_error kept", () => {
    const route = testRoute("anthropic", NO_UPSTREAM);
    const failed: MessageInit = { body: { case: "toolResult", value: { callId: "call_b", toolName: "read_file", content: "ENOENT", isError: true } } };
    const body = ready(prepareBody(route, modelRequest({ route, system: "sys", tools, messages: [userText("read a and b"), assistant(twoCalls), toolResult("call_a", "read_file", "A"), failed, userText("next")] })));
    expect(body["system"]).toBe("sys");
    expect(body["messages"]).toEqual([
      { role: "user", content: [{ type: "text", text: "read a and b" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reading both." },
          { type: "tool_use", id: "call_a", name: "read_file", input: { path: "a.ts" } },
          { type: "tool_use", id: "call_b", name: "read_file", input: { path: "b.ts" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "call_a", content: "A" },
          { type: "tool_result", tool_use_id: "call_b", content: "ENOENT", is_error: true },
        ],
      },
      { role: "user", content: [{ type: "text", text: "next" }] },
    ]);
  });

  it("projects images where the route supports them", () => {
    const image: MessageInit = {
      body: { case: "user", value: { content: [{ part: { case: "text", value: { text: "what is this" } } }, { part: { case: "image", value: { mimeType: "image/png", data: new Uint8Array([137, 80, 78, 71]) } } }] } },
    };
    const data = Buffer.from([137, 80, 78, 71]).toString("base64");
    const chat = testRoute("openai-chat", NO_UPSTREAM, { supportsImages: true });
    expect(ready(prepareBody(chat, modelRequest({ route: chat, messages: [image] })))["messages"][0].content[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${data}` } });
    const responses = testRoute("openai-responses", NO_UPSTREAM, { supportsImages: true });
    expect(ready(prepareBody(responses, modelRequest({ route: responses, messages: [image] })))["input"][0].content[1]).toEqual({ type: "input_image", image_url: `data:image/png;base64,${data}`, detail: "auto" });
    const anthropic = testRoute("anthropic", NO_UPSTREAM, { supportsImages: true });
    expect(ready(prepareBody(anthropic, modelRequest({ route: anthropic, messages: [image] })))["messages"][0].content[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data } });
  });

  it("never decodes another kind's replay state, and ignores a layout that does not match the message", () => {
    const anthropicRoute = testRoute("anthropic", NO_UPSTREAM);
    const anthropicReplay = encodeReplay(anthropicRoute, { v: 1, layout: [{ kind: "opaque", value: { type: "thinking", thinking: "t", signature: "sig" } }, { kind: "text" }] });
    const message = create(AssistantMessageSchema, { content: [{ part: { case: "text", value: { text: "hello" } } }], replay: anthropicReplay });
    const responsesRoute = testRoute("openai-responses", NO_UPSTREAM, { id: anthropicRoute.id });
    expect(ready(prepareBody(responsesRoute, modelRequest({ route: responsesRoute, messages: [userText("q"), assistant(message)] })))["input"][1]).toEqual({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "hello", annotations: [] }],
    });
    expect(ready(prepareBody(anthropicRoute, modelRequest({ route: anthropicRoute, messages: [userText("q"), assistant(message)] })))["messages"][1].content).toEqual([
      { type: "thinking", thinking: "t", signature: "sig" },
      { type: "text", text: "hello" },
    ]);
    const twoTexts = create(AssistantMessageSchema, { content: [{ part: { case: "text", value: { text: "a" } } }, { part: { case: "text", value: { text: "b" } } }], replay: anthropicReplay });
    expect(ready(prepareBody(anthropicRoute, modelRequest({ route: anthropicRoute, messages: [userText("q"), assistant(twoTexts)] })))["messages"][1].content).toEqual([
      { type: "text", text: "a" },
      { type: "text", text: "b" },
    ]);
  });
});
