/**
 * A sub-agent's run names its parent in request headers the IDE adds to the
 * child's RunSSE and BidiAppend requests: x-parent-request-id (the parent
 * run), x-parent-agent-tool-call-id (the parent's Task call) and
 * x-root-parent-request-id (the top of the tree). The PreparedRun carries the
 * first two; the store links the runs (and refuses a parent of another member).
 */
import { isRunId } from "@byok/contracts";

export const PARENT_REQUEST_ID_HEADER = "x-parent-request-id";
export const PARENT_TOOL_CALL_ID_HEADER = "x-parent-agent-tool-call-id";
export const ROOT_PARENT_REQUEST_ID_HEADER = "x-root-parent-request-id";

export type ParentLink =
  | { kind: "none" }
  | { kind: "child"; parentRunId: string; parentToolCallId: string }
  /** A parent id that cannot be a run id of ours: the run is not linked (the reason is logged). */
  | { kind: "unusable"; reason: string };

export function parentLinkOf(headers: Readonly<Record<string, string>>): ParentLink {
  const parentRunId = headers[PARENT_REQUEST_ID_HEADER]?.trim() ?? "";
  const parentToolCallId = headers[PARENT_TOOL_CALL_ID_HEADER]?.trim() ?? "";
  if (parentRunId === "") return parentToolCallId === "" ? { kind: "none" } : { kind: "unusable", reason: "a parent tool call id without a parent request id" };
  if (!isRunId(parentRunId)) return { kind: "unusable", reason: `parent request id ${JSON.stringify(parentRunId)} is not a run id` };
  return { kind: "child", parentRunId, parentToolCallId };
}
