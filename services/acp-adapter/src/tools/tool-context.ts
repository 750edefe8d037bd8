/**
 * What one tool call runs against: the session (id, working directory), the
 * editor, the permission gate, the limits, and how it reports progress
 * (tool_call_update fields for this call, plan updates). A tool returns a
 * ToolOutcome: the result text the model sees (always a string), whether it
 * is an error, and the call's final look for the editor.
 */
import { isAbsolute, resolve } from "node:path";
import type { PlanEntry, ToolCallContent, ToolCallLocation, ToolCallStatus } from "../acp/acp-types.ts";
import type { EditorClient } from "../acp/editor-client.ts";
import type { ToolLimits } from "../config.ts";
import type { PermissionPorts } from "./permissions.ts";

export interface ToolCallView {
  readonly title?: string;
  readonly status?: ToolCallStatus;
  readonly content?: ToolCallContent[];
  readonly locations?: ToolCallLocation[];
  readonly rawOutput?: unknown;
}

export interface ToolContext {
  readonly sessionId: string;
  readonly cwd: string;
  readonly callId: string;
  readonly editor: EditorClient;
  readonly permissions: PermissionPorts;
  readonly limits: ToolLimits;
  /** Aborted when the prompt is cancelled or the session's connection ends. */
  readonly signal: AbortSignal;
  /** A tool_call_update of this call (only the fields given change). */
  show(view: ToolCallView): void;
  /** The session's plan (todo_write). */
  plan(entries: PlanEntry[]): void;
}

export interface ToolOutcome {
  /** What the model sees. */
  readonly content: string;
  readonly isError: boolean;
  /** The call's final look (status completed/failed is set from isError when absent). */
  readonly view?: ToolCallView;
}

export function failed(content: string, view: ToolCallView = {}): ToolOutcome {
  return { content, isError: true, view: { status: "failed", ...view } };
}

/** An absolute path: as given, or relative to the session's working directory. */
export function absolutePath(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** `text` cut to `limit` characters, saying so. */
export function capped(text: string, limit: number, what: string): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[${what} cut off after ${limit} of ${text.length} characters]`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
