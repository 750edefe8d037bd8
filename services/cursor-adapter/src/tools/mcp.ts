/**
 * MCP tools, all executed by the client:
 * - CallMcpTool{server, toolName, arguments} and dynamic MCP tools -> mcp_args
 * - GetMcpTools -> mcp_state_exec_args (its result also refreshes the routes)
 * - FetchMcpResource -> read_mcp_resource_exec_args
 */
import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import type { McpRoute } from "./mcp-routes.ts";
import { singleStepPlan, type OutcomeParts } from "./single-step.ts";
import { ArgReader, clipMiddle, toModelText, type ToolArgs } from "./tool-args.ts";
import type { ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const MAX_MODEL_CHARS = 60_000;

// ---- CallMcpTool and dynamic MCP tools ----

export function planCallMcpTool(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("CallMcpTool", args);
  const server = reader.requiredString("server");
  const toolName = reader.requiredString("toolName");
  const toolArguments = reader.optionalObject("arguments") ?? {};
  const route = reader.error() === undefined ? (ctx.mcp.lookup(server, toolName) ?? assumedRoute(server, toolName)) : undefined;
  return planMcpCall(call, ctx, route, toolArguments, reader.error());
}

/** A call of a dynamic MCP tool (the model calls it by its definition name; all arguments go to the tool). */
export function planDynamicMcpTool(call: ToolCallInput, args: ToolArgs, route: McpRoute, ctx: ToolPlanContext): ToolPlan {
  return planMcpCall(call, ctx, route, args, undefined);
}

/**
 * Neither the run request nor GetMcpTools described this tool: use the naming
 * the client uses for meta MCP tools; a wrong guess comes back as tool_not_found.
 */
function assumedRoute(server: string, toolName: string): McpRoute {
  return { name: `${server}-${toolName}`, providerIdentifier: server, toolName, serverIdentifier: server, description: "", inputSchemaJson: "" };
}

function planMcpCall(call: ToolCallInput, ctx: ToolPlanContext, route: McpRoute | undefined, toolArguments: ToolArgs, error: string | undefined): ToolPlan {
  const mcpArgs = create(tools.McpArgsSchema, {
    name: route?.name ?? "",
    args: toValueMap(toolArguments),
    toolCallId: call.callId,
    providerIdentifier: route?.providerIdentifier ?? "",
    toolName: route?.toolName ?? "",
    serverIdentifier: route?.serverIdentifier ?? "",
  });
  const description = route?.description ?? "";
  const failed = (message: string) =>
    toolOutcome(
      call.callId,
      mcpVariant(mcpArgs, description, create(tools.McpToolResultSchema, { result: { case: "error", value: { error: message } } })),
      ctx,
      message,
      true,
    );
  if (error !== undefined || route === undefined) {
    const message = error ?? "Invalid MCP tool call.";
    return { kind: "invalid", error: message, started: startedCard(call.callId, mcpVariant(mcpArgs, description), ctx), outcome: failed(message) };
  }
  return singleStepPlan(
    call.callId,
    ctx,
    (result?: tools.McpToolResult) => mcpVariant(mcpArgs, description, result),
    { case: "mcpArgs", value: mcpArgs },
    "mcpResult",
    (reply) => mcpOutcomeParts(reply, route),
    failed,
  );
}

function toValueMap(args: ToolArgs): Record<string, Value> {
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, fromJson(ValueSchema, v as JsonValue)]));
}

function mcpVariant(args: tools.McpArgs, description: string, result?: tools.McpToolResult): ToolVariant {
  return {
    case: "mcpToolCall",
    value: create(tools.McpToolCallSchema, {
      args,
      ...(result === undefined ? {} : { result }),
      ...(description === "" ? {} : { description }),
    }),
  };
}

function mcpOutcomeParts(reply: tools.McpResult, route: McpRoute): OutcomeParts<tools.McpToolResult> {
  const r = reply.result;
  const parts = (result: tools.McpToolResult["result"], content: string, isError: boolean): OutcomeParts<tools.McpToolResult> => ({
    result: create(tools.McpToolResultSchema, { result }),
    content,
    isError,
    effects: [],
  });
  const error = (message: string) => parts({ case: "error", value: create(tools.McpToolErrorSchema, { error: message }) }, message, true);
  switch (r.case) {
    case "success":
      return parts({ case: "success", value: r.value }, clipMiddle(mcpContentText(r.value), MAX_MODEL_CHARS), r.value.isError);
    case "error":
      return error(`MCP tool ${route.toolName} failed: ${r.value.error}`);
    case "rejected":
      return parts(
        { case: "rejected", value: r.value },
        `The user rejected the MCP tool call${r.value.reason === "" ? "." : `: ${r.value.reason}`}`,
        true,
      );
    case "permissionDenied":
      return parts({ case: "permissionDenied", value: r.value }, `Permission denied for MCP tool ${route.toolName}: ${r.value.error}`, true);
    case "toolNotFound":
      return error(
        `MCP tool not found: ${r.value.name || route.toolName}.${listSuffix("Available tools", r.value.availableTools)} Use GetMcpTools to list the tools.`,
      );
    case "serverNotFound":
      return error(`MCP server not found: ${r.value.name || route.serverIdentifier}.${listSuffix("Available servers", r.value.availableServers)}`);
    case "approved":
      return error(`MCP tool ${route.toolName} was approved but returned no result.`);
    case undefined:
      return error(`MCP tool ${route.toolName} returned no result.`);
    default: {
      const unreachable: never = r;
      throw new Error(`unknown MCP result ${String(unreachable)}`);
    }
  }
}

/** Text items joined; images described; structured content JSON-encoded when there is no text. */
export function mcpContentText(success: tools.McpSuccess): string {
  const pieces: string[] = [];
  for (const item of success.content) {
    const c = item.content;
    switch (c.case) {
      case "text":
        pieces.push(c.value.outputLocation === undefined ? c.value.text : `${c.value.text}\n[Full output: ${c.value.outputLocation.filePath}]`);
        break;
      case "image":
        pieces.push(`[image: ${c.value.mimeType || "unknown type"}, ${c.value.data.length} bytes]`);
        break;
      case undefined:
        break;
      default: {
        const unreachable: never = c;
        throw new Error(`unknown MCP content ${String(unreachable)}`);
      }
    }
  }
  if (pieces.length === 0 && success.structuredContent !== undefined) return toModelText(success.structuredContent);
  return pieces.length === 0 ? "(no content)" : pieces.join("\n");
}

function listSuffix(label: string, names: readonly string[]): string {
  return names.length === 0 ? "" : ` ${label}: ${names.join(", ")}.`;
}

// ---- GetMcpTools ----

export function planGetMcpTools(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("GetMcpTools", args);
  const server = reader.optionalString("server");
  const toolName = reader.optionalString("toolName");
  const pattern = reader.optionalRegex("pattern");
  if (pattern !== undefined && pattern.source.length > 256) reader.problem(`"pattern" must be at most 256 characters`);
  const getArgs = create(tools.GetMcpToolsArgsSchema, {
    toolCallId: call.callId,
    ...(server === undefined ? {} : { server }),
    ...(toolName === undefined ? {} : { toolName }),
    ...(pattern === undefined ? {} : { pattern: pattern.source }),
  });
  const failed = (error: string) =>
    toolOutcome(
      call.callId,
      getMcpToolsVariant(getArgs, create(tools.GetMcpToolsAgentResultSchema, { result: { case: "error", value: { error } } })),
      ctx,
      error,
      true,
    );
  const error = reader.error();
  if (error !== undefined) return { kind: "invalid", error, started: startedCard(call.callId, getMcpToolsVariant(getArgs), ctx), outcome: failed(error) };
  const stateArgs = create(tools.McpStateExecArgsSchema, { serverIdentifiers: server === undefined ? [] : [server], kickOnly: false });
  const filter: McpToolFilter = { server, toolName, pattern: pattern?.regex };
  return singleStepPlan(
    call.callId,
    ctx,
    (result?: tools.GetMcpToolsAgentResult) => getMcpToolsVariant(getArgs, result),
    { case: "mcpStateExecArgs", value: stateArgs },
    "mcpStateExecResult",
    (reply) => mcpStateOutcomeParts(reply, filter),
    failed,
  );
}

function getMcpToolsVariant(args: tools.GetMcpToolsArgs, result?: tools.GetMcpToolsAgentResult): ToolVariant {
  return { case: "getMcpToolsToolCall", value: create(tools.GetMcpToolsToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

interface McpToolFilter {
  server: string | undefined;
  toolName: string | undefined;
  pattern: RegExp | undefined;
}

function mcpStateOutcomeParts(reply: tools.McpStateExecResult, filter: McpToolFilter): OutcomeParts<tools.GetMcpToolsAgentResult> {
  const r = reply.result;
  const error = (message: string): OutcomeParts<tools.GetMcpToolsAgentResult> => ({
    result: create(tools.GetMcpToolsAgentResultSchema, { result: { case: "error", value: { error: message } } }),
    content: message,
    isError: true,
    effects: [],
  });
  switch (r.case) {
    case "success": {
      const content = clipMiddle(mcpToolsListing(r.value.servers, filter), MAX_MODEL_CHARS);
      return {
        result: create(tools.GetMcpToolsAgentResultSchema, { result: { case: "success", value: { content } } }),
        content,
        isError: false,
        effects: [{ kind: "mcp_state", servers: r.value.servers }],
      };
    }
    case "error":
      return error(`Could not list MCP tools: ${r.value.error}`);
    case "rejected":
      return error(`Listing MCP tools was rejected${r.value.reason === "" ? "." : `: ${r.value.reason}`}`);
    case undefined:
      return error("Listing MCP tools returned no result.");
    default: {
      const unreachable: never = r;
      throw new Error(`unknown MCP state result ${String(unreachable)}`);
    }
  }
}

/** JSON listing of the matching servers and tools (what the model needs for CallMcpTool). */
export function mcpToolsListing(servers: readonly tools.McpStateServer[], filter: McpToolFilter): string {
  const listed = servers
    .filter((s) => filter.server === undefined || s.serverIdentifier === filter.server || s.serverName === filter.server)
    .map((s) => ({
      server: s.serverIdentifier,
      serverName: s.serverName,
      ...(s.status === undefined ? {} : { status: s.status }),
      tools: s.tools
        .filter((t) => filter.toolName === undefined || t.toolName === filter.toolName || t.name === filter.toolName)
        .filter((t) => filter.pattern === undefined || filter.pattern.test(t.toolName) || filter.pattern.test(t.description))
        .map((t) => ({ toolName: t.toolName, description: t.description, inputSchema: schemaValue(t) })),
    }))
    .filter((s) => s.tools.length > 0 || (filter.toolName === undefined && filter.pattern === undefined));
  if (listed.length === 0) return "No matching MCP tools.";
  return toModelText(listed);
}

function schemaValue(tool: tools.McpStateToolDefinition): unknown {
  const text = tool.inputSchemaJson;
  if (text !== undefined && text.trim() !== "") {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return tool.inputSchema === undefined ? {} : toJson(ValueSchema, tool.inputSchema);
}

// ---- FetchMcpResource ----

export function planFetchMcpResource(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("FetchMcpResource", args);
  const server = reader.requiredString("server");
  const uri = reader.requiredString("uri");
  const downloadPath = reader.optionalString("downloadPath");
  const resourceArgs = create(tools.ReadMcpResourceExecArgsSchema, {
    server,
    uri,
    toolCallId: call.callId,
    ...(downloadPath === undefined ? {} : { downloadPath }),
  });
  const failed = (error: string) =>
    toolOutcome(
      call.callId,
      resourceVariant(resourceArgs, create(tools.ReadMcpResourceExecResultSchema, { result: { case: "error", value: { uri, error } } })),
      ctx,
      error,
      true,
    );
  const error = reader.error();
  if (error !== undefined) return { kind: "invalid", error, started: startedCard(call.callId, resourceVariant(resourceArgs), ctx), outcome: failed(error) };
  return singleStepPlan(
    call.callId,
    ctx,
    (result?: tools.ReadMcpResourceExecResult) => resourceVariant(resourceArgs, result),
    { case: "readMcpResourceExecArgs", value: resourceArgs },
    "readMcpResourceExecResult",
    (reply) => resourceOutcomeParts(reply, uri),
    failed,
  );
}

function resourceVariant(args: tools.ReadMcpResourceExecArgs, result?: tools.ReadMcpResourceExecResult): ToolVariant {
  return {
    case: "readMcpResourceToolCall",
    value: create(tools.ReadMcpResourceToolCallSchema, { args, ...(result === undefined ? {} : { result }) }),
  };
}

function resourceOutcomeParts(reply: tools.ReadMcpResourceExecResult, uri: string): OutcomeParts<tools.ReadMcpResourceExecResult> {
  const r = reply.result;
  const parts = (content: string, isError: boolean): OutcomeParts<tools.ReadMcpResourceExecResult> => ({ result: reply, content, isError, effects: [] });
  switch (r.case) {
    case "success": {
      const s = r.value;
      const lines: string[] = [];
      if (s.downloadPath !== undefined && s.downloadPath !== "") lines.push(`Saved ${s.uri || uri} to ${s.downloadPath}.`);
      if (s.content.case === "text") lines.push(clipMiddle(s.content.value, MAX_MODEL_CHARS));
      else if (s.content.case === "blob") lines.push(`Binary resource ${s.uri || uri} (${s.mimeType ?? "unknown type"}, ${s.content.value.length} bytes).`);
      if (s.outputLocation !== undefined && s.outputLocation.filePath !== "") lines.push(`[Full content: ${s.outputLocation.filePath}]`);
      return parts(lines.length === 0 ? "(empty resource)" : lines.join("\n"), false);
    }
    case "error":
      return parts(`Could not read MCP resource ${r.value.uri || uri}: ${r.value.error}`, true);
    case "rejected":
      return parts(`The user rejected reading MCP resource ${r.value.uri || uri}${r.value.reason === "" ? "." : `: ${r.value.reason}`}`, true);
    case "notFound":
      return parts(`MCP resource not found: ${r.value.uri || uri}`, true);
    case undefined:
      return parts(`Reading MCP resource ${uri} returned no result.`, true);
    default: {
      const unreachable: never = r;
      throw new Error(`unknown MCP resource result ${String(unreachable)}`);
    }
  }
}
