/**
 * Which BYOK model the run uses and with which settings: the picker id from
 * requested_model (or model_details), possibly a variant string
 * `id[reasoning=high,fast=true]`, plus the parameters Cursor sends back with the
 * ids our model list declared ("reasoning" / "effort", "fast") and Cursor's
 * context picker ("context": "200k", "1m", a token count), which sets the
 * context window the run worker budgets against: the chosen window when it is
 * within the model's configured one, else the configured one (a larger choice
 * is reported as ignored).
 */
import { create } from "@bufbuild/protobuf";
import { ModelSpecSchema, type ModelSpec } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import { effortSchema, modelTokenizer, type ModelConfig } from "@byok/platform";
import { requestedModelId } from "./check-run-request.ts";

export type ModelSelection =
  | { kind: "ok"; model: ModelConfig; spec: ModelSpec; ignoredParameters: string[] }
  | { kind: "unknown_model"; modelId: string };

const EFFORT_PARAMETER_IDS = new Set(["reasoning", "effort"]);
export const CONTEXT_PARAMETER_ID = "context";

export function selectModel(runRequest: agent.AgentRunRequest, models: readonly ModelConfig[]): ModelSelection {
  const { baseId, parameters } = parseModelId(requestedModelId(runRequest));
  for (const p of runRequest.requestedModel?.parameters ?? []) parameters.set(p.id, p.value);

  const model = models.find((m) => m.id === baseId);
  if (model === undefined) return { kind: "unknown_model", modelId: baseId };

  const ignoredParameters: string[] = [];
  let effort: string | undefined;
  let contextWindow = model.contextWindow;
  for (const [id, value] of parameters) {
    if (id === CONTEXT_PARAMETER_ID) {
      const chosen = contextTokensOf(value);
      if (chosen !== undefined && chosen <= model.contextWindow) contextWindow = chosen;
      else ignoredParameters.push(`${id}=${value}`);
      continue;
    }
    if (!EFFORT_PARAMETER_IDS.has(id)) continue;
    const parsed = effortSchema.safeParse(value);
    if (parsed.success && model.efforts.includes(parsed.data)) effort = parsed.data;
    else ignoredParameters.push(`${id}=${value}`);
  }
  const spec = create(ModelSpecSchema, {
    modelId: model.id,
    contextWindow,
    tokenizer: modelTokenizer(model),
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

/** "200k" -> 200000, "1m" -> 1000000, "128000" -> 128000, "356K (Custom)" -> 356000; undefined when unreadable. */
export function contextTokensOf(value: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([km]?)\b/i.exec(value.trim());
  if (match === null) return undefined;
  const unit = (match[2] ?? "").toLowerCase();
  const tokens = Math.round(Number(match[1]) * (unit === "k" ? 1_000 : unit === "m" ? 1_000_000 : 1));
  return tokens > 0 ? tokens : undefined;
}
