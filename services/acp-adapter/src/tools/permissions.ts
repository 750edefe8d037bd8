/**
 * Permission before a write or a command (session/request_permission): the
 * member picks Allow (this call), Always allow (this kind of call for the rest
 * of the session) or Reject. "Always" is remembered per session under a
 * permission key and kept with the session (it survives a reload):
 * - `edit`: every file write and edit of the session;
 * - `execute:<program>`: every command whose first word is <program>.
 * A rejected call is not executed: the model is told, and the run goes on.
 * `cancelled` (the prompt was cancelled while the editor asked) is neither.
 */
import type { PermissionOption, RequestPermissionOutcome, ToolCallUpdate } from "../acp/acp-types.ts";

export type PermissionVerdict = "allowed" | "rejected" | "cancelled";

export interface PermissionPorts {
  ask(toolCall: ToolCallUpdate, options: PermissionOption[]): Promise<RequestPermissionOutcome>;
  /** Keys the member allowed "always" in this session. */
  allowedAlways(): ReadonlySet<string>;
  /** The member chose "always" for `key`: remember it with the session. */
  rememberAlways(key: string): void;
  /** Every decision, for the metrics: `remembered` when an earlier "always" answered without asking. */
  decided?(kind: "edit" | "execute", verdict: "allowed" | "allowed_always" | "rejected" | "cancelled" | "remembered"): void;
}

export const PERMISSION_OPTIONS = {
  allowOnce: "allow-once",
  allowAlways: "allow-always",
  reject: "reject-once",
} as const;

export function editPermissionKey(): string {
  return "edit";
}

/** `execute:<first word>`; a command starting with a variable assignment or quote keys on its whole first word. */
export function commandPermissionKey(command: string): string {
  const program = command.trim().split(/\s+/)[0] ?? "";
  return `execute:${program}`;
}

export async function askPermission(ports: PermissionPorts, key: string, scope: string, toolCall: ToolCallUpdate): Promise<PermissionVerdict> {
  const kind = key === editPermissionKey() ? "edit" : "execute";
  if (ports.allowedAlways().has(key)) {
    ports.decided?.(kind, "remembered");
    return "allowed";
  }
  const options: PermissionOption[] = [
    { optionId: PERMISSION_OPTIONS.allowOnce, name: "Allow", kind: "allow_once" },
    { optionId: PERMISSION_OPTIONS.allowAlways, name: `Always allow ${scope}`, kind: "allow_always" },
    { optionId: PERMISSION_OPTIONS.reject, name: "Reject", kind: "reject_once" },
  ];
  const outcome = await ports.ask(toolCall, options);
  if (outcome.outcome === "cancelled") {
    ports.decided?.(kind, "cancelled");
    return "cancelled";
  }
  switch (outcome.optionId) {
    case PERMISSION_OPTIONS.allowOnce:
      ports.decided?.(kind, "allowed");
      return "allowed";
    case PERMISSION_OPTIONS.allowAlways:
      ports.rememberAlways(key);
      ports.decided?.(kind, "allowed_always");
      return "allowed";
    default:
      // Reject, or an option id we never offered: nothing runs without a clear yes.
      ports.decided?.(kind, "rejected");
      return "rejected";
  }
}

/** What the model is told when the member did not allow the tool: `refused[verdict]`, or undefined when it may go on. */
export function refusal(verdict: PermissionVerdict, refused: { readonly rejected: string; readonly cancelled: string }): string | undefined {
  switch (verdict) {
    case "rejected":
    case "cancelled":
      return refused[verdict];
    case "allowed":
      return undefined;
    default: {
      const unreachable: never = verdict;
      throw new Error(`unknown permission verdict ${String(unreachable)}`);
    }
  }
}
