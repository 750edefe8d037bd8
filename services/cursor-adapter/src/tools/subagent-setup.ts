/**
 * How a run starts sub-agents (Task): which model the child runs use, decided
 * by the parent model's `subagentModel` policy in the gateway configuration
 * ("inherit" = the same model, "disabled" = no Task, or another configured
 * model), and which sub-agent types exist (the built-in ones plus the custom
 * sub-agents the member defined, from the request context).
 */
import type { ModelConfig } from "@byok/platform";

/** Built-in sub-agent types: any work, read-only investigation, running commands. */
export const BUILTIN_SUBAGENT_TYPES = ["generalPurpose", "explore", "shell"] as const;
export type BuiltinSubagentType = (typeof BUILTIN_SUBAGENT_TYPES)[number];

export interface SubagentSetup {
  /** The model id every child run uses (subagent_args.model_id; a BYOK model, so the child is served here too). */
  modelId: string;
  /** Root conversation of the sub-agent tree (the client's conversation_group_id, else this conversation). */
  rootConversationId: string;
  /** Custom sub-agents of the member: name -> description. */
  customTypes: ReadonlyMap<string, string>;
}

/** The child model for runs on `model`; undefined when the policy disables sub-agents. */
export function subagentModelOf(model: ModelConfig): string | undefined {
  const policy = model.subagentModel ?? "inherit";
  if (policy === "disabled") return undefined;
  if (policy === "inherit") return model.id;
  return policy;
}

export function isBuiltinSubagentType(name: string): name is BuiltinSubagentType {
  return (BUILTIN_SUBAGENT_TYPES as readonly string[]).includes(name);
}
