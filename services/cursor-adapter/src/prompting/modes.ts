/**
 * Cursor's AgentMode -> our prompt mode. The mode of a turn comes from its
 * UserMessage; the checkpoint's mode is the fallback for actions without one.
 * Modes we have no prompt for run as "agent".
 */
import { agent } from "@byok/cursor-protocol";

export const PROMPT_MODES = ["agent", "ask", "plan", "debug", "subagent"] as const;
export type PromptMode = (typeof PROMPT_MODES)[number];

/** The Cursor mode a prompt mode stands for (checkpoint `mode` after SwitchMode); undefined for sub-agents. */
export function agentModeOf(mode: string): agent.AgentMode | undefined {
  switch (mode) {
    case "agent":
      return agent.AgentMode.AGENT;
    case "ask":
      return agent.AgentMode.ASK;
    case "plan":
      return agent.AgentMode.PLAN;
    case "debug":
      return agent.AgentMode.DEBUG;
    default:
      return undefined;
  }
}

export function promptModeOf(mode: agent.AgentMode | undefined, isSubagent: boolean): PromptMode {
  if (isSubagent) return "subagent";
  switch (mode) {
    case agent.AgentMode.ASK:
      return "ask";
    case agent.AgentMode.PLAN:
      return "plan";
    case agent.AgentMode.DEBUG:
      return "debug";
    default:
      return "agent";
  }
}
