/**
 * The picker parameter through which a member chooses the reasoning effort of a
 * BYOK model. Cursor sends the chosen value back in
 * RequestedModel.parameters[{id: EFFORT_PARAMETER_ID, value}] (or inside a
 * variant string, see variant-string.ts).
 */
import type { Effort, ModelConfig } from "@byok/platform";

export const EFFORT_PARAMETER_ID = "reasoning";

const EFFORT_LABELS: Record<Effort, string> = {
  none: "None",
  minimal: "Minimal",
  low: "Low",
  medium: "Medium",
  high: "High",
  xhigh: "Extra High",
  max: "Max",
};

export function effortLabel(effort: Effort): string {
  return EFFORT_LABELS[effort];
}

/**
 * The effort the picker preselects: the model's configured default when it is
 * one of its efforts, else medium when offered, else the first offered one.
 * Undefined when the model offers no effort choice.
 */
export function defaultEffort(model: ModelConfig): Effort | undefined {
  if (model.efforts.length === 0) return undefined;
  if (model.effort !== undefined && model.efforts.includes(model.effort)) return model.effort;
  if (model.efforts.includes("medium")) return "medium";
  return model.efforts[0];
}
