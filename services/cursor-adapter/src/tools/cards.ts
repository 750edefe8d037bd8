/**
 * Tool call UI cards: the typed ToolCall the IDE renders, in its three stages
 * (partial: empty typed variant; started: args; completed: args + typed result),
 * and the InteractionUpdate payloads that carry them.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import type { ToolEffect, ToolOutcome, ToolPlanContext, ToolVariant } from "./types.ts";

/** Static tool name -> ToolCall oneof case. Dynamic MCP tools use "mcpToolCall". */
const VARIANT_OF_TOOL = {
  Shell: "shellToolCall",
  AwaitShell: "awaitToolCall",
  Read: "readToolCall",
  Write: "editToolCall",
  StrReplace: "editToolCall",
  EditNotebook: "editToolCall",
  Delete: "deleteToolCall",
  Grep: "grepToolCall",
  Glob: "globToolCall",
  ReadLints: "readLintsToolCall",
  TodoWrite: "updateTodosToolCall",
  CallMcpTool: "mcpToolCall",
  GetMcpTools: "getMcpToolsToolCall",
  FetchMcpResource: "readMcpResourceToolCall",
  AskQuestion: "askQuestionToolCall",
  Task: "taskToolCall",
  UpdateCurrentStep: "communicateUpdateToolCall",
  SwitchMode: "switchModeToolCall",
  CreatePlan: "createPlanToolCall",
  WebSearch: "webSearchToolCall",
  WebFetch: "webFetchToolCall",
} as const satisfies Record<string, NonNullable<ToolVariant["case"]>>;

export type StaticToolName = keyof typeof VARIANT_OF_TOOL;

export function isStaticToolName(name: string): name is StaticToolName {
  return Object.hasOwn(VARIANT_OF_TOOL, name);
}

/** The empty typed variant for a tool (what partial_tool_call shows first). */
export function emptyVariant(name: string, isDynamicMcp: boolean): ToolVariant {
  const variantCase = isStaticToolName(name) ? VARIANT_OF_TOOL[name] : isDynamicMcp ? "mcpToolCall" : undefined;
  switch (variantCase) {
    case "shellToolCall":
      return { case: variantCase, value: create(tools.ShellToolCallSchema) };
    case "awaitToolCall":
      return { case: variantCase, value: create(tools.AwaitToolCallSchema) };
    case "readToolCall":
      return { case: variantCase, value: create(tools.ReadToolCallSchema) };
    case "editToolCall":
      return { case: variantCase, value: create(tools.EditToolCallSchema) };
    case "deleteToolCall":
      return { case: variantCase, value: create(tools.DeleteToolCallSchema) };
    case "grepToolCall":
      return { case: variantCase, value: create(tools.GrepToolCallSchema) };
    case "globToolCall":
      return { case: variantCase, value: create(tools.GlobToolCallSchema) };
    case "readLintsToolCall":
      return { case: variantCase, value: create(tools.ReadLintsToolCallSchema) };
    case "updateTodosToolCall":
      return { case: variantCase, value: create(tools.UpdateTodosToolCallSchema) };
    case "mcpToolCall":
      return { case: variantCase, value: create(tools.McpToolCallSchema) };
    case "getMcpToolsToolCall":
      return { case: variantCase, value: create(tools.GetMcpToolsToolCallSchema) };
    case "readMcpResourceToolCall":
      return { case: variantCase, value: create(tools.ReadMcpResourceToolCallSchema) };
    case "askQuestionToolCall":
      return { case: variantCase, value: create(tools.AskQuestionToolCallSchema) };
    case "taskToolCall":
      return { case: variantCase, value: create(tools.TaskToolCallSchema) };
    case "communicateUpdateToolCall":
      return { case: variantCase, value: create(tools.CommunicateUpdateToolCallSchema) };
    case "switchModeToolCall":
      return { case: variantCase, value: create(tools.SwitchModeToolCallSchema) };
    case "createPlanToolCall":
      return { case: variantCase, value: create(tools.CreatePlanToolCallSchema) };
    case "webSearchToolCall":
      return { case: variantCase, value: create(tools.WebSearchToolCallSchema) };
    case "webFetchToolCall":
      return { case: variantCase, value: create(tools.WebFetchToolCallSchema) };
    case undefined:
      return { case: undefined };
    default: {
      const unreachable: never = variantCase;
      throw new Error(`no card for ${String(unreachable)}`);
    }
  }
}

export interface CardTimes {
  startedAtMs?: number;
  completedAtMs?: number;
}

/** A ToolCall card: variant + tool_call_id (+ timestamps). */
export function toolCallCard(callId: string, variant: ToolVariant, times: CardTimes = {}): tools.ToolCall {
  return create(tools.ToolCallSchema, {
    toolCallId: callId,
    ...(times.startedAtMs === undefined ? {} : { startedAtMs: msBigint(times.startedAtMs) }),
    ...(times.completedAtMs === undefined ? {} : { completedAtMs: msBigint(times.completedAtMs) }),
    tool: variant,
  });
}

/** The card for partial_tool_call: the empty typed variant with tool_call_id. */
export function partialCard(callId: string, name: string, isDynamicMcp: boolean): tools.ToolCall {
  return toolCallCard(callId, emptyVariant(name, isDynamicMcp));
}

/** The card for tool_call_started: args filled, started_at_ms set. */
export function startedCard(callId: string, variant: ToolVariant, ctx: Pick<ToolPlanContext, "startedAtMs">): tools.ToolCall {
  return toolCallCard(callId, variant, { startedAtMs: ctx.startedAtMs });
}

/** A finished tool: the completed card (args + result, both timestamps) and the model's string. */
export function toolOutcome(
  callId: string,
  variant: ToolVariant,
  ctx: Pick<ToolPlanContext, "startedAtMs" | "now">,
  content: string,
  isError: boolean,
  effects: ToolEffect[] = [],
): ToolOutcome {
  return {
    content,
    isError,
    toolCall: toolCallCard(callId, variant, { startedAtMs: ctx.startedAtMs, completedAtMs: ctx.now() }),
    effects,
  };
}

/** InteractionUpdate.message payloads carrying tool cards. */
export type ToolInteractionUpdate =
  | { case: "partialToolCall"; value: tools.PartialToolCallUpdate }
  | { case: "toolCallStarted"; value: tools.ToolCallStartedUpdate }
  | { case: "toolCallDelta"; value: tools.ToolCallDeltaUpdate }
  | { case: "toolCallCompleted"; value: tools.ToolCallCompletedUpdate };

export function partialToolCallUpdate(
  callId: string,
  toolCall: tools.ToolCall,
  modelCallId: string,
  argsTextDelta = "",
): ToolInteractionUpdate {
  return {
    case: "partialToolCall",
    value: create(tools.PartialToolCallUpdateSchema, { callId, toolCall, argsTextDelta, modelCallId }),
  };
}

export function toolCallStartedUpdate(callId: string, toolCall: tools.ToolCall, modelCallId: string): ToolInteractionUpdate {
  return { case: "toolCallStarted", value: create(tools.ToolCallStartedUpdateSchema, { callId, toolCall, modelCallId }) };
}

export function toolCallDeltaUpdate(callId: string, toolCallDelta: tools.ToolCallDelta, modelCallId: string): ToolInteractionUpdate {
  return { case: "toolCallDelta", value: create(tools.ToolCallDeltaUpdateSchema, { callId, toolCallDelta, modelCallId }) };
}

export function toolCallCompletedUpdate(callId: string, toolCall: tools.ToolCall, modelCallId: string): ToolInteractionUpdate {
  return { case: "toolCallCompleted", value: create(tools.ToolCallCompletedUpdateSchema, { callId, toolCall, modelCallId }) };
}

function msBigint(ms: number): bigint {
  return BigInt(Math.max(0, Math.trunc(ms)));
}
