/**
 * Synchronous validation of a run_request: decides the BidiAppend answer for
 * append_seqno 0 before any session work starts.
 */
import type { agent } from "@byok/cursor-protocol";
import type { RunRequestCheck } from "../transport/session-port.ts";

/** The picker id the client asked for: requested_model first, model_details as fallback. */
export function requestedModelId(runRequest: agent.AgentRunRequest): string {
  const requested = runRequest.requestedModel?.modelId ?? "";
  if (requested !== "") return requested;
  return runRequest.modelDetails?.modelId ?? "";
}

export function checkRunRequest(runRequest: agent.AgentRunRequest): RunRequestCheck {
  if (requestedModelId(runRequest) === "") return { kind: "invalid", message: "run_request has no model id" };
  if (runRequest.conversationState === undefined) return { kind: "invalid", message: "Conversation state is required" };
  if ((runRequest.conversationId ?? "") === "") return { kind: "invalid", message: "run_request has no conversation_id" };
  if (runRequest.action?.action.case === undefined) return { kind: "invalid", message: "run_request has no action" };
  return { kind: "ok" };
}
