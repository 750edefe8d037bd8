/**
 * The typed error result of each card variant, for calls that fail before a
 * tool-specific planner ran (arguments that are not a JSON object). A completed
 * card needs a typed result or the IDE keeps it spinning.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import type { ToolVariant } from "./types.ts";

/** `variant` (args kept) with its error result set to `message`. */
export function withErrorResult(variant: ToolVariant, message: string): ToolVariant {
  switch (variant.case) {
    case "shellToolCall":
      return {
        case: variant.case,
        value: create(tools.ShellToolCallSchema, {
          args: variant.value.args,
          result: { result: { case: "spawnError", value: { command: variant.value.args?.command ?? "", error: message } } },
        }),
      };
    case "awaitToolCall":
      return { case: variant.case, value: create(tools.AwaitToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "readToolCall":
      return {
        case: variant.case,
        value: create(tools.ReadToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { errorMessage: message } } } }),
      };
    case "editToolCall":
      return {
        case: variant.case,
        value: create(tools.EditToolCallSchema, {
          args: variant.value.args,
          result: { result: { case: "error", value: { path: variant.value.args?.path ?? "", error: message, modelVisibleError: message } } },
        }),
      };
    case "deleteToolCall":
      return {
        case: variant.case,
        value: create(tools.DeleteToolCallSchema, {
          args: variant.value.args,
          result: { result: { case: "error", value: { path: variant.value.args?.path ?? "", error: message } } },
        }),
      };
    case "grepToolCall":
      return { case: variant.case, value: create(tools.GrepToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "globToolCall":
      return { case: variant.case, value: create(tools.GlobToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "readLintsToolCall":
      return {
        case: variant.case,
        value: create(tools.ReadLintsToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { errorMessage: message } } } }),
      };
    case "updateTodosToolCall":
      return {
        case: variant.case,
        value: create(tools.UpdateTodosToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }),
      };
    case "mcpToolCall":
      return { case: variant.case, value: create(tools.McpToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "getMcpToolsToolCall":
      return {
        case: variant.case,
        value: create(tools.GetMcpToolsToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }),
      };
    case "readMcpResourceToolCall":
      return {
        case: variant.case,
        value: create(tools.ReadMcpResourceToolCallSchema, {
          args: variant.value.args,
          result: { result: { case: "error", value: { uri: variant.value.args?.uri ?? "", error: message } } },
        }),
      };
    case "askQuestionToolCall":
      return {
        case: variant.case,
        value: create(tools.AskQuestionToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { errorMessage: message } } } }),
      };
    case "taskToolCall":
      return { case: variant.case, value: create(tools.TaskToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "communicateUpdateToolCall":
      return {
        case: variant.case,
        value: create(tools.CommunicateUpdateToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }),
      };
    case "switchModeToolCall":
      return { case: variant.case, value: create(tools.SwitchModeToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "createPlanToolCall":
      return { case: variant.case, value: create(tools.CreatePlanToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "webSearchToolCall":
      return { case: variant.case, value: create(tools.WebSearchToolCallSchema, { args: variant.value.args, result: { result: { case: "error", value: { error: message } } } }) };
    case "webFetchToolCall":
      return {
        case: variant.case,
        value: create(tools.WebFetchToolCallSchema, {
          args: variant.value.args,
          result: { result: { case: "error", value: { url: variant.value.args?.url ?? "", error: message } } },
        }),
      };
    case undefined:
      return variant;
    default: {
      const unreachable: never = variant;
      throw new Error(`no error result for ${String(unreachable)}`);
    }
  }
}
