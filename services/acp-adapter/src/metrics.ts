/**
 * The ACP adapter's series (no session, run or member ids in labels):
 *
 *   byok_acp_links                                   gauge
 *     Bridge links alive now (connected, or dropped and waiting for the
 *     bridge to resume them).
 *   byok_acp_link_events_total{event}                counter
 *     event = opened, resumed (a bridge came back on its link), ended,
 *     refused_key (unknown or revoked member key), refused_unavailable (the
 *     store could not check the key).
 *   byok_acp_active_prompts                          gauge
 *     session/prompt requests whose run has not ended.
 *   byok_acp_prompts_total{end}                      counter
 *     Prompts ended: end = end_turn, max_tokens, refusal, cancelled, or the
 *     failure kind (run_failed, store, bus, ...).
 *   byok_acp_tool_calls_total{tool, outcome}         counter
 *     Tool calls run on the editor: outcome ok or error (rejected ones too);
 *     tool is one of ACP_TOOL_NAMES, or "other" for a name the model made up.
 *   byok_acp_permission_requests_total{kind, verdict} counter
 *     Permission requests to the member: kind edit | execute, verdict
 *     allowed, allowed_always, rejected or cancelled; `remembered` counts calls
 *     allowed by an earlier "always" without asking.
 */
import { Counter, Gauge, type Registry } from "@byok/platform";
import { isAcpToolName } from "./tools/tool-names.ts";

export type LinkEvent = "opened" | "resumed" | "ended" | "refused_key" | "refused_unavailable";
export type PermissionVerdictLabel = "allowed" | "allowed_always" | "rejected" | "cancelled" | "remembered";

export interface AcpAdapterMetrics {
  linkEvent(event: LinkEvent): void;
  promptStarted(): void;
  promptEnded(end: string): void;
  toolCall(tool: string, isError: boolean): void;
  permission(kind: "edit" | "execute", verdict: PermissionVerdictLabel): void;
}

export interface AcpAdapterMetricSources {
  readonly links: () => number;
}

export function createAcpAdapterMetrics(registry: Registry, sources: AcpAdapterMetricSources): AcpAdapterMetrics {
  new Gauge({
    name: "byok_acp_links",
    help: "Bridge links alive (connected or waiting for a resume).",
    registers: [registry],
    collect() {
      this.set(sources.links());
    },
  });
  const links = new Counter({ name: "byok_acp_link_events_total", help: "Bridge link events.", labelNames: ["event"], registers: [registry] });
  for (const event of ["opened", "resumed", "ended", "refused_key", "refused_unavailable"] as const) links.inc({ event }, 0);
  let active = 0;
  new Gauge({
    name: "byok_acp_active_prompts",
    help: "session/prompt requests whose run has not ended.",
    registers: [registry],
    collect() {
      this.set(active);
    },
  });
  const prompts = new Counter({ name: "byok_acp_prompts_total", help: "Prompts ended, by how they ended.", labelNames: ["end"], registers: [registry] });
  const tools = new Counter({ name: "byok_acp_tool_calls_total", help: "Tool calls run on the editor, by tool and outcome.", labelNames: ["tool", "outcome"], registers: [registry] });
  const permissions = new Counter({ name: "byok_acp_permission_requests_total", help: "Permission decisions, by tool kind and verdict.", labelNames: ["kind", "verdict"], registers: [registry] });
  return {
    linkEvent: (event) => links.inc({ event }),
    promptStarted: () => void active++,
    promptEnded(end) {
      active = Math.max(0, active - 1);
      prompts.inc({ end });
    },
    // The name is the model's: one it made up counts as "other".
    toolCall: (tool, isError) => tools.inc({ tool: isAcpToolName(tool) ? tool : "other", outcome: isError ? "error" : "ok" }),
    permission: (kind, verdict) => permissions.inc({ kind, verdict }),
  };
}

/** For code paths without a registry (unit tests). */
export const NO_METRICS: AcpAdapterMetrics = {
  linkEvent: () => undefined,
  promptStarted: () => undefined,
  promptEnded: () => undefined,
  toolCall: () => undefined,
  permission: () => undefined,
};
