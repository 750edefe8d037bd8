/**
 * ModelSpec checks shared by the adapters. Each adapter maps the values to its
 * own parameter names; here we only decide which value applies and refuse
 * what the route cannot take (a configuration error, never silently dropped):
 * effort = ModelSpec.effort, else the model's configured default, and it must
 * be one of the model's configured efforts; max output = ModelSpec, else the
 * model's configured maxOutputTokens, never above that limit; `fast` cannot
 * be honoured by a fixed BYOK endpoint. `disable_thinking` (compaction
 * summaries) picks the least effort the model lists ("none", "minimal", then
 * "low") and otherwise sends none; adapters with a thinking switch turn it off.
 */
import type { ModelSpec } from "@byok/contracts";
import { effortSchema, type Effort } from "@byok/platform";
import type { Route } from "../routes.ts";
import { RequestRejection } from "./adapter.ts";

export function checkSpec(spec: ModelSpec | undefined, route: Route): void {
  if (spec?.fast === true) throw new RequestRejection("config", `model ${route.id}: fast mode is not available on a BYOK endpoint`);
}

const LEAST_EFFORTS: readonly Effort[] = ["none", "minimal", "low"];

export function resolveEffort(spec: ModelSpec | undefined, route: Route): Effort | undefined {
  if (spec?.disableThinking === true) return LEAST_EFFORTS.find((e) => route.efforts.includes(e));
  const requested = spec?.effort;
  if (requested === undefined) return route.effort;
  const parsed = effortSchema.safeParse(requested);
  if (!parsed.success) throw new RequestRejection("config", `model ${route.id}: unknown effort ${JSON.stringify(requested)}`);
  if (!route.efforts.includes(parsed.data)) {
    const accepted = route.efforts.length === 0 ? "it takes no effort setting" : `accepted: ${route.efforts.join(", ")}`;
    throw new RequestRejection("config", `model ${route.id}: effort "${parsed.data}" is not supported (${accepted})`);
  }
  return parsed.data;
}

export function resolveMaxOutputTokens(spec: ModelSpec | undefined, route: Route): number | undefined {
  const requested = spec?.maxOutputTokens;
  if (requested === undefined) return route.maxOutputTokens;
  if (requested === 0) throw new RequestRejection("config", `model ${route.id}: max output tokens must be positive`);
  if (route.maxOutputTokens !== undefined && requested > route.maxOutputTokens)
    throw new RequestRejection("config", `model ${route.id}: max output tokens ${requested} exceeds the model limit ${route.maxOutputTokens}`);
  return requested;
}
