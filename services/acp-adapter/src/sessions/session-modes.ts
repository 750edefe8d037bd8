/**
 * A session's two choices and how ACP shows them: the mode (ask: read only;
 * agent: reads, edits and commands; plan: read and write a plan, no changes)
 * and the model (one of the team's BYOK models from the gateway file). Both
 * are offered as session modes / config options (`mode`, `model`) and changed
 * with session/set_mode, session/set_config_option or the older
 * session/set_model; a change applies from the next prompt on.
 */
import type { ModelConfig } from "@byok/platform";
import type { SessionConfigOption, SessionModeState } from "../acp/acp-types.ts";

export const ACP_MODES = ["ask", "agent", "plan"] as const;
export type AcpMode = (typeof ACP_MODES)[number];

export const DEFAULT_MODE: AcpMode = "agent";

const MODE_TEXT: Readonly<Record<AcpMode, { name: string; description: string }>> = {
  ask: { name: "Ask", description: "Answers questions and reads files; changes nothing." },
  agent: { name: "Agent", description: "Reads, edits files and runs commands, asking before edits and commands." },
  plan: { name: "Plan", description: "Reads the code and writes a step-by-step plan; changes nothing." },
};

export function isAcpMode(value: string): value is AcpMode {
  return (ACP_MODES as readonly string[]).includes(value);
}

export const MODE_CONFIG_ID = "mode";
export const MODEL_CONFIG_ID = "model";

export function modeState(current: AcpMode): SessionModeState {
  return { currentModeId: current, availableModes: ACP_MODES.map((id) => ({ id, name: MODE_TEXT[id].name, description: MODE_TEXT[id].description })) };
}

export function configOptions(mode: AcpMode, modelId: string, models: readonly ModelConfig[]): SessionConfigOption[] {
  return [
    {
      type: "select",
      id: MODE_CONFIG_ID,
      name: "Mode",
      category: "mode",
      currentValue: mode,
      options: ACP_MODES.map((id) => ({ value: id, name: MODE_TEXT[id].name, description: MODE_TEXT[id].description })),
    },
    {
      type: "select",
      id: MODEL_CONFIG_ID,
      name: "Model",
      description: "The team's models, on the team's keys",
      category: "model",
      currentValue: modelId,
      options: models.map((m) => ({ value: m.id, name: m.displayName, description: `${m.id} (${m.contextWindow.toLocaleString("en-US")} tokens context)` })),
    },
  ];
}
