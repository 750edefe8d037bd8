/**
 * How a model's tool call first looks in the editor, before it runs: a
 * `tool_call` as soon as the model names the tool (title and kind), then its
 * arguments once complete (a better title, the file it touches, rawInput).
 * The tools themselves refine the view while they run.
 */
import type { ToolCall, ToolCallLocation } from "../acp/acp-types.ts";
import { isAcpToolName, toolKindOf } from "./tool-names.ts";

const TITLES: Readonly<Record<string, string>> = {
  read_file: "Read file",
  write_file: "Write file",
  edit_file: "Edit file",
  run_command: "Run command",
  todo_write: "Update plan",
};

export function announcedCall(callId: string, name: string): ToolCall {
  return { toolCallId: callId, title: TITLES[name] ?? name, kind: toolKindOf(name), status: "pending", rawInput: {} };
}

export interface CallDescription {
  readonly title: string;
  readonly locations: ToolCallLocation[];
  readonly rawInput: unknown;
}

/** Title and locations from the complete arguments (the defaults when they are not an object). */
export function describeCall(name: string, argumentsJson: string): CallDescription {
  let args: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(argumentsJson === "" ? "{}" : argumentsJson);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
  } catch {
    // The tool itself reports bad JSON to the model.
  }
  const path = typeof args["path"] === "string" ? args["path"] : undefined;
  const fallback = TITLES[name] ?? name;
  if (!isAcpToolName(name)) return { title: fallback, locations: [], rawInput: args };
  switch (name) {
    case "read_file":
      return { title: path === undefined ? fallback : `Read ${path}`, locations: path === undefined ? [] : [{ path, ...(typeof args["line"] === "number" ? { line: args["line"] } : {}) }], rawInput: args };
    case "write_file":
      return { title: path === undefined ? fallback : `Write ${path}`, locations: path === undefined ? [] : [{ path }], rawInput: args };
    case "edit_file":
      return { title: path === undefined ? fallback : `Edit ${path}`, locations: path === undefined ? [] : [{ path }], rawInput: args };
    case "run_command":
      return { title: typeof args["command"] === "string" ? `\`${args["command"]}\`` : fallback, locations: [], rawInput: args };
    case "todo_write":
      return { title: fallback, locations: [], rawInput: args };
    default: {
      const unreachable: never = name;
      throw new Error(`unknown tool ${String(unreachable)}`);
    }
  }
}
