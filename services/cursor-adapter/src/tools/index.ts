/**
 * Client tools for a Cursor run: tool catalog per mode, planning a model tool
 * call into exec/interaction/server work, decoding client results into the
 * model's string + the typed UI card, wire id bookkeeping and the staged
 * checkpoint's pending tool call JSON.
 */
export { compileToolSet, loadToolCatalog, DEFAULT_PROMPT_DIR, TOOL_MODES, ToolCatalogError } from "./catalog.ts";
export type { ToolCatalog, ToolMode, ToolSetResult } from "./catalog.ts";
export { planToolCall } from "./plan-tool-call.ts";
export {
  emptyVariant,
  partialCard,
  partialToolCallUpdate,
  toolCallCompletedUpdate,
  toolCallDeltaUpdate,
  toolCallStartedUpdate,
  toolCallCard,
} from "./cards.ts";
export type { ToolInteractionUpdate } from "./cards.ts";
export { ExecIdRegistry } from "./exec-ids.ts";
export type { ExecCloseLookup, ExecIdLookup } from "./exec-ids.ts";
export { McpRouteTable, inputSchemaJsonOf } from "./mcp-routes.ts";
export type { McpDefinitionLike, McpRoute, McpRoutes } from "./mcp-routes.ts";
export { buildPendingToolCallsJson, parsePendingToolCallsJson, toolIdentifierOf } from "./pending-calls.ts";
export type { PendingToolCalls, PendingToolCallsInput } from "./pending-calls.ts";
export { withReadPaths } from "./files.ts";
export { mergeTodos } from "./todos.ts";
export { ArgsFieldStreamer, editContentDelta, editContentField, editPathCard } from "./edit-stream.ts";
export type { StreamedField } from "./edit-stream.ts";
export { toModelText } from "./tool-args.ts";
export type {
  ExecCall,
  ExecProgress,
  ExecReply,
  ExecRequest,
  ExecStep,
  InteractionProgress,
  InteractionQueryPayload,
  InteractionReply,
  ToolCallInput,
  ToolEffect,
  ToolOutcome,
  ToolPlan,
  ToolPlanContext,
  ToolVariant,
} from "./types.ts";
