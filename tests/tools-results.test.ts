/**
 * End to end: tool results are strings by the time they reach the model. A
 * structured MCP result (live), and tool results from a client checkpoint
 * whose JSON holds an object, an array, a number or null (history), all arrive
 * as their JSON text. Also: the client's MCP tools are offered to the model by
 * name after the mode's tools and routed back to the right MCP server.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import { agent, type tools } from "@byok/cursor-protocol";
import { buildRunRequest, type ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { enqueueChat, execArgs, execResult, finishedOk } from "./tools-support.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");

/** A run request of a user message in a new conversation, offering the client's MCP tools. */
function runRequestWithMcpTools(gw: GatewayHarness, text: string, mcpTools: MessageInitShape<typeof agent.McpToolsSchema>["mcpTools"]) {
  const client = gw.client();
  const chat = client.conversation();
  const runRequest = buildRunRequest({
    conversationId: chat.id,
    conversationState: chat.state,
    model: { via: "requested_model", modelId: gw.modelId },
    action: { kind: "user_message", text },
  });
  if (runRequest.message.case !== "runRequest") throw new Error("not a run request");
  runRequest.message.value.mcpTools = create(agent.McpToolsSchema, { mcpTools });
  return { client, runRequest };
}

describe("tool results reach the model as strings", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("a structured MCP result (object) is sent to the model as its JSON text; dynamic MCP tools are offered and routed", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-mcp-1",
      calls: [
        { id: "call_mcp_meta", name: "CallMcpTool", args: { server: "weather", toolName: "forecast", arguments: { city: "Berlin", days: 2 } } },
        { id: "call_mcp_dynamic", name: "weather-now", args: { city: "Paris" } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-mcp-2", text: "Mild weather in both cities." });

    const mcpCalls: tools.McpArgs[] = [];
    const onExec = {
      mcpArgs: async (ctx: ExecContext) => {
        const args = execArgs<tools.McpArgs>(ctx);
        mcpCalls.push(args);
        const structuredContent: JsonObject =
          args.toolName === "forecast" ? { city: "Berlin", days: [{ high: 21, low: 12 }, { high: 19, low: null }], ok: true } : { city: "Paris", now: 17.5 };
        await ctx.reply(execResult({ case: "mcpResult", value: { result: { case: "success", value: { content: [], isError: false, structuredContent } } } }));
      },
    };
    const { client, runRequest } = runRequestWithMcpTools(gw, "Weather in Berlin and Paris?", [
      {
        name: "weather-now",
        description: "Current weather for a city.",
        providerIdentifier: "weather",
        toolName: "now",
        inputSchemaJson: JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
      },
    ]);
    const result = await finishedOk(client.startRun({ runRequest, onExec }));
    expect(result.violations, result.describe()).toEqual([]);

    const [first, second] = gw.llm.requestsTo("openai-chat");
    const offered = (first!.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    expect(offered.at(-1)).toBe("weather-now");
    expect(offered.indexOf("CallMcpTool")).toBeLessThan(offered.indexOf("weather-now"));

    // Both calls went to the client's MCP server with the names it knows.
    const dynamic = mcpCalls.find((c) => c.toolCallId === "call_mcp_dynamic");
    expect(dynamic).toMatchObject({ name: "weather-now", providerIdentifier: "weather", toolName: "now" });
    expect(dynamic?.args["city"]?.kind).toEqual({ case: "stringValue", value: "Paris" });
    expect(mcpCalls.find((c) => c.toolCallId === "call_mcp_meta")).toMatchObject({ toolName: "forecast" });

    // The model got strings: the JSON text of the structured results.
    const loop = afterLastUser(chatMessages(second));
    const toolMessages = loop.filter((m) => m.role === "tool");
    for (const m of toolMessages) expect(typeof m.content === "string" || Array.isArray(m.content)).toBe(true);
    const meta = textOf(toolMessages.find((m) => m.tool_call_id === "call_mcp_meta")?.content);
    expect(JSON.parse(meta)).toEqual({ city: "Berlin", days: [{ high: 21, low: 12 }, { high: 19, low: null }], ok: true });
    expect(JSON.parse(textOf(toolMessages.find((m) => m.tool_call_id === "call_mcp_dynamic")?.content))).toEqual({ city: "Paris", now: 17.5 });
    // The store keeps exactly those strings.
    const run = await gw.store("getRun", { runId: result.requestId });
    const stored = await gw.store("getRevisionMessages", { revisionId: run.run!.headRevisionId });
    const storedMeta = stored.messages.find((m) => m.body.case === "toolResult" && m.body.value.callId === "call_mcp_meta");
    expect(storedMeta?.body.case === "toolResult" && storedMeta.body.value.content).toBe(meta);
  });

  it("tool results in the client's history that are an object, an array, a number or null arrive as JSON strings", async () => {
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const client = gw.client();
    const chat = client.conversation();
    const results: Array<[string, unknown]> = [
      ["call_obj", { rows: 2, names: ["a", "b"] }],
      ["call_arr", [1, "two", { three: 3 }]],
      ["call_num", 42],
      ["call_null", null],
    ];
    const root = (value: object) => client.blobs.put(new TextEncoder().encode(JSON.stringify(value)));
    const roots = [
      root({ role: "system", content: "An older system prompt." }),
      root({ role: "user", id: "m-old", content: [{ type: "text", text: "<user_query>\nLook things up.\n</user_query>" }] }),
      root({
        role: "assistant",
        id: "1",
        content: results.map(([id]) => ({ type: "tool-call", toolCallId: id, toolName: "CallMcpTool", args: { server: "db", toolName: "q" } })),
      }),
      ...results.map(([id, value]) =>
        root({ role: "tool", id, content: [{ type: "tool-result", toolCallId: id, toolName: "CallMcpTool", result: value, isError: false }] }),
      ),
      root({ role: "assistant", id: "1", content: [{ type: "text", text: "Looked them up." }] }),
    ];
    chat.state = create(agent.ConversationStateStructureSchema, { rootPromptMessagesJson: roots });
    const result = await finishedOk(chat.send("What did you find?", { modelId: gw.modelId }));
    expect(result.violations, result.describe()).toEqual([]);

    const sent = chatMessages(gw.llm.requestsTo("openai-chat")[0]);
    const toolContents = Object.fromEntries(sent.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content]));
    expect(toolContents).toEqual({
      call_obj: JSON.stringify({ rows: 2, names: ["a", "b"] }),
      call_arr: JSON.stringify([1, "two", { three: 3 }]),
      call_num: "42",
      call_null: "null",
    });
  });

  it("a client MCP tool named like one of the mode's tools is a protocol error before anything runs", async () => {
    const { client, runRequest } = runRequestWithMcpTools(gw, "hi", [{ name: "Read", description: "shadowing", providerIdentifier: "fs", toolName: "read" }]);
    const result = await client.startRun({ runRequest }).finished;
    expect(result.end, result.describe()).toMatchObject({ kind: "error", code: "invalid_argument" });
    expect(result.end.kind === "error" && result.end.message).toContain("protocol error");
    expect(result.end.kind === "error" && result.end.message).toContain('"Read"');
    expect(gw.llm.requests).toHaveLength(0);
    expect((await gw.store("getRun", { runId: result.requestId })).run).toBeUndefined();
  });
});
