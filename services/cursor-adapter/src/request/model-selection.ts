/**
 * Which BYOK model the run uses and with which settings: the picker id from
 * requested_model (or model_details), possibly a variant string
 * `id[reasoning=high,fast=true]`, plus the parameters Cursor sends back with the
 * ids our model list declared ("reasoning" / "effort", "fast").
 */
import { create } from "@bufbuild/protobuf";
import { ModelSpecSchema, type ModelSpec } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import { effortSchema, type ModelConfig } from "@byok/platform";
import { requestedModelId } from "./check-run-request.ts";

export type ModelSelection =
  | { kind: "ok"; model: ModelConfig; spec: ModelSpec; ignoredParameters: string[] }
  | { kind: "unknown_model"; modelId: string };

const EFFORT_PARAMETER_IDS = new Set(["reasoning", "effort"]);

export function selectModel(runRequest: agent.AgentRunRequest, models: readonly ModelConfig[]): ModelSelection {
  const { baseId, parameters } = parseModelId(requestedModelId(runRequest));
  for (const p of runRequest.requestedModel?.parameters ?? []) parameters.set(p.id, p.value);

  const model = models.find((m) => m.id === baseId);
  if (model === undefined) return { kind: "unknown_model", modelId: baseId };

  const ignoredParameters: string[] = [];
  let effort: string | undefined;
  for (const [id, value] of parameters) {
    if (!EFFORT_PARAMETER_IDS.has(id)) continue;
    const parsed = effortSchema.safeParse(value);
    if (parsed.success && model.efforts.includes(parsed.data)) effort = parsed.data;
    else ignoredParameters.push(`${id}=${value}`);
  }
  const spec = create(ModelSpecSchema, {
    modelId: model.id,
    contextWindow: model.contextWindow,
    fast: parameters.get("fast") === "true",
    ...(effort === undefined ? {} : { effort }),
    ...(model.maxOutputTokens === undefined ? {} : { maxOutputTokens: model.maxOutputTokens }),
  });
  return { kind: "ok", model, spec, ignoredParameters };
}

/** Splits `name[a=1,b=2]` into the id and its parameters; a plain id has none. */
export function parseModelId(raw: string): { baseId: string; parameters: Map<string, string> } {
  const parameters = new Map<string, string>();
  const variant = /^([^[\]]+)\[([^\]]*)\]$/.exec(raw.trim());
  if (variant === null) return { baseId: raw.trim(), parameters };
  for (const pair of (variant[2] ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq > 0) parameters.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return { baseId: (variant[1] ?? "").trim(), parameters };
}
