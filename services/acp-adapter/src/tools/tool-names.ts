/**
 * The ACP tools the model may be offered, what each needs from the editor
 * (its client capabilities from initialize), and how the editor shows it
 * (ToolKind). A tool whose capability the editor did not declare is not
 * offered: an editor without `terminal` never sees run_command, one without
 * `fs.writeTextFile` can only be read from.
 */
import type { ClientCapabilities, ToolKind } from "../acp/acp-types.ts";

export const ACP_TOOL_NAMES = ["read_file", "write_file", "edit_file", "run_command", "todo_write"] as const;
export type AcpToolName = (typeof ACP_TOOL_NAMES)[number];

export function isAcpToolName(name: string): name is AcpToolName {
  return (ACP_TOOL_NAMES as readonly string[]).includes(name);
}

/** True when the editor can serve the tool. */
export function editorServes(name: AcpToolName, capabilities: ClientCapabilities): boolean {
  const canRead = capabilities.fs?.readTextFile === true;
  const canWrite = capabilities.fs?.writeTextFile === true;
  switch (name) {
    case "read_file":
      return canRead;
    case "write_file":
      return canWrite;
    case "edit_file":
      return canRead && canWrite;
    case "run_command":
      return capabilities.terminal === true;
    case "todo_write":
      return true;
    default: {
      const unreachable: never = name;
      throw new Error(`unknown tool ${String(unreachable)}`);
    }
  }
}

export function toolKindOf(name: string): ToolKind {
  if (!isAcpToolName(name)) return "other";
  switch (name) {
    case "read_file":
      return "read";
    case "write_file":
    case "edit_file":
      return "edit";
    case "run_command":
      return "execute";
    case "todo_write":
      return "think";
    default: {
      const unreachable: never = name;
      throw new Error(`unknown tool ${String(unreachable)}`);
    }
  }
}
