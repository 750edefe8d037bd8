import { create, fromJson, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { McpRouteTable } from "./mcp-routes.ts";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, viaWire } from "./tool-test-support.ts";
import type { ExecReply, ToolPlanContext } from "./types.ts";

function mcpReply(init: MessageInitShape<typeof tools.McpResultSchema>): ExecReply {
  return { case: "mcpResult", value: viaWire(tools.McpResultSchema, create(tools.McpResultSchema, init)) };
}

function call(name: string, args: object, ctx: ToolPlanContext = testContext()) {
  return planToolCall({ callId: `call_${name}`, name, argumentsJson: JSON.stringify(args) }, ctx);
}

const docsState = create(tools.McpStateServerSchema, {
  serverName: "Docs",
  serverIdentifier: "user-docs",
  tools: [
    { name: "user-docs-search", toolName: "search", providerIdentifier: "user-docs", description: "Search the docs", inputSchemaJson: '{"type":"object"}' },
    { name: "user-docs-fetch", toolName: "fetch", providerIdentifier: "user-docs", description: "Fetch a page", inputSchema: fromJson(ValueSchema, { type: "object" }) },
  ],
});

describe("McpRouteTable", () => {
  it("routes by server identifier or server name after GetMcpTools", () => {
    const table = new McpRouteTable();
    expect(table.lookup("user-docs", "search")).toBeUndefined();
    table.applyState([docsState]);
    expect(table.lookup("user-docs", "search")).toMatchObject({ name: "user-docs-search", providerIdentifier: "user-docs", toolName: "search" });
    expect(table.lookup("Docs", "fetch")?.name).toBe("user-docs-fetch");
    expect(table.knownServers()).toEqual(["user-docs"]);
  });
});

describe("CallMcpTool", () => {
  it("fills mcp_args exactly from the client's MCP state and converts arguments to Values", () => {
    const ctx = testContext();
    (ctx.mcp as McpRouteTable).applyState([docsState]);
    const plan = call("CallMcpTool", { server: "user-docs", toolName: "search", arguments: { query: "retry", limit: 3, exact: true, tags: ["a"], extra: null } }, ctx);
    const request = execOf(plan).first.request;
    if (request.case !== "mcpArgs") throw new Error(request.case);
    expect(request.value).toMatchObject({
      name: "user-docs-search",
      providerIdentifier: "user-docs",
      toolName: "search",
      serverIdentifier: "user-docs",
      toolCallId: "call_CallMcpTool",
    });
    const args = Object.fromEntries(Object.entries(request.value.args).map(([k, v]) => [k, toJson(ValueSchema, v)]));
    expect(args).toEqual({ query: "retry", limit: 3, exact: true, tags: ["a"], extra: null });
    expect(variantOf(plan.started, "mcpToolCall")).toMatchObject({ description: "Search the docs" });
  });

  it("falls back to the server-tool naming when nothing describes the tool", () => {
    const request = execOf(call("CallMcpTool", { server: "github", toolName: "list_issues" })).first.request;
    expect(request.value).toMatchObject({ name: "github-list_issues", providerIdentifier: "github", toolName: "list_issues", serverIdentifier: "github" });
  });

  it("joins text content, describes images, and keeps the client's is_error", () => {
    const exec = execOf(call("CallMcpTool", { server: "s", toolName: "t" }));
    const outcome = doneOf(
      exec.onReply(
        mcpReply({
          result: {
            case: "success",
            value: {
              isError: true,
              content: [
                { content: { case: "text", value: { text: "first" } } },
                { content: { case: "image", value: { mimeType: "image/png", data: new Uint8Array(4) } } },
              ],
            },
          },
        }),
      ),
    );
    expect(outcome).toMatchObject({ content: "first\n[image: image/png, 4 bytes]", isError: true });
    expect(variantOf(outcome.toolCall, "mcpToolCall").result?.result.case).toBe("success");
  });

  it("JSON-encodes structured content when there is no text", () => {
    const exec = execOf(call("CallMcpTool", { server: "s", toolName: "t" }));
    const outcome = doneOf(exec.onReply(mcpReply({ result: { case: "success", value: { structuredContent: { rows: [1, 2], ok: true } } } })));
    expect(outcome.content).toBe('{"rows":[1,2],"ok":true}');
  });

  it("turns tool_not_found into an error the model can act on", () => {
    const exec = execOf(call("CallMcpTool", { server: "s", toolName: "t" }));
    const outcome = doneOf(exec.onReply(mcpReply({ result: { case: "toolNotFound", value: { name: "s-t", availableTools: ["s-a", "s-b"] } } })));
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toBe("MCP tool not found: s-t. Available tools: s-a, s-b. Use GetMcpTools to list the tools.");
    expect(variantOf(outcome.toolCall, "mcpToolCall").result?.result.case).toBe("error");
  });

  it("rejects calls without server or toolName", () => {
    expect(invalidOf(call("CallMcpTool", { toolName: "t" })).error).toBe('Invalid arguments for CallMcpTool: "server" is required.');
  });
});

describe("dynamic MCP tools", () => {
  it("sends the whole argument object to the tool the client defined", () => {
    const ctx = testContext({
      mcpDefinitions: [{ name: "mcp_linear_create", description: "Create an issue", providerIdentifier: "linear", toolName: "create_issue" }],
    });
    const plan = call("mcp_linear_create", { title: "Bug" }, ctx);
    const request = execOf(plan).first.request;
    if (request.case !== "mcpArgs") throw new Error(request.case);
    expect(request.value).toMatchObject({ name: "mcp_linear_create", providerIdentifier: "linear", toolName: "create_issue" });
    expect(toJson(ValueSchema, request.value.args["title"] ?? fromJson(ValueSchema, null))).toBe("Bug");
  });
});

describe("GetMcpTools", () => {
  it("lists matching tools and hands the state back as an effect", () => {
    const plan = call("GetMcpTools", { server: "user-docs", pattern: "^sea" });
    const exec = execOf(plan);
    expect(exec.first.request).toMatchObject({ case: "mcpStateExecArgs", value: { serverIdentifiers: ["user-docs"], kickOnly: false } });
    const reply: ExecReply = {
      case: "mcpStateExecResult",
      value: viaWire(tools.McpStateExecResultSchema, create(tools.McpStateExecResultSchema, { result: { case: "success", value: { servers: [docsState] } } })),
    };
    const outcome = doneOf(exec.onReply(reply));
    expect(JSON.parse(outcome.content)).toEqual([
      { server: "user-docs", serverName: "Docs", tools: [{ toolName: "search", description: "Search the docs", inputSchema: { type: "object" } }] },
    ]);
    expect(outcome.effects).toHaveLength(1);
    expect(outcome.effects[0]?.kind).toBe("mcp_state");
    expect(variantOf(outcome.toolCall, "getMcpToolsToolCall").result?.result).toMatchObject({ case: "success", value: { content: outcome.content } });
  });
});

describe("FetchMcpResource", () => {
  it("reads a resource through read_mcp_resource_exec_args", () => {
    const exec = execOf(call("FetchMcpResource", { server: "user-docs", uri: "docs://intro", downloadPath: "/w/intro.md" }));
    expect(exec.first.request).toMatchObject({
      case: "readMcpResourceExecArgs",
      value: { server: "user-docs", uri: "docs://intro", downloadPath: "/w/intro.md", toolCallId: "call_FetchMcpResource" },
    });
    const reply: ExecReply = {
      case: "readMcpResourceExecResult",
      value: create(tools.ReadMcpResourceExecResultSchema, {
        result: { case: "success", value: { uri: "docs://intro", downloadPath: "/w/intro.md", content: { case: "text", value: "# Intro" } } },
      }),
    };
    expect(doneOf(exec.onReply(reply)).content).toBe("Saved docs://intro to /w/intro.md.\n# Intro");
  });

  it("reports a missing resource", () => {
    const exec = execOf(call("FetchMcpResource", { server: "s", uri: "x://y" }));
    const reply: ExecReply = {
      case: "readMcpResourceExecResult",
      value: create(tools.ReadMcpResourceExecResultSchema, { result: { case: "notFound", value: { uri: "x://y" } } }),
    };
    expect(doneOf(exec.onReply(reply))).toMatchObject({ content: "MCP resource not found: x://y", isError: true });
  });
});
