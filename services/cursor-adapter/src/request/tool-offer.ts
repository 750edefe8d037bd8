/**
 * Which catalog tools a run must not be offered although its mode lists them:
 * Task when the model's sub-agent policy is "disabled"; WebSearch without a
 * search backend, WebFetch when the gateway's policy turns it off, either of
 * them when the client's settings turned it off (web_search_enabled /
 * web_fetch_enabled = false); UpdateCurrentStep when the client asked
 * sub-agents not to report progress.
 */
import type { agent } from "@byok/cursor-protocol";

export interface ToolOfferInput {
  /** The child model of Task; undefined = sub-agents disabled. */
  subagentModelId: string | undefined;
  webFetchEnabled: boolean;
  webSearchEnabled: boolean;
  requestContext: agent.RequestContext | undefined;
  suppressProgressTool: boolean;
}

export function toolsLeftOut(input: ToolOfferInput): Set<string> {
  const out = new Set<string>();
  if (input.subagentModelId === undefined) out.add("Task");
  if (!input.webSearchEnabled || input.requestContext?.webSearchEnabled === false) out.add("WebSearch");
  if (!input.webFetchEnabled || input.requestContext?.webFetchEnabled === false) out.add("WebFetch");
  if (input.suppressProgressTool) out.add("UpdateCurrentStep");
  return out;
}
