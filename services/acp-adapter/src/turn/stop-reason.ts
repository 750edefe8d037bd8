/**
 * How a run's end answers session/prompt. ACP reports the normal ends as stop
 * reasons, not errors: completed -> end_turn, cancelled -> cancelled, a model
 * that hit its output limit -> max_tokens, a refusal or content filter ->
 * refusal. Every other failure is a JSON-RPC error (acp/failures.ts). The
 * worker sets no step cap, so max_turn_requests does not occur.
 */
import { ModelFailureKind, type RunTerminal } from "@byok/contracts";
import type { StopReason } from "../acp/acp-types.ts";
import type { AcpFailure } from "../acp/failures.ts";

export type TurnEnd = { readonly kind: "stop"; readonly stopReason: StopReason } | { readonly kind: "failed"; readonly failure: AcpFailure };

export const CANCELLED: TurnEnd = { kind: "stop", stopReason: "cancelled" };

export function turnEndOf(outcome: RunTerminal["outcome"]): TurnEnd {
  switch (outcome.case) {
    case "completed":
      return { kind: "stop", stopReason: "end_turn" };
    case "cancelled":
      return CANCELLED;
    case "failed":
      switch (outcome.value.modelFailureKind) {
        case ModelFailureKind.LENGTH:
          return { kind: "stop", stopReason: "max_tokens" };
        case ModelFailureKind.REFUSAL:
          return { kind: "stop", stopReason: "refusal" };
        default:
          return { kind: "failed", failure: { kind: "run_failed", failed: outcome.value } };
      }
    case undefined:
      return { kind: "failed", failure: { kind: "internal", message: "the run ended without an outcome" } };
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown run outcome ${String(unreachable)}`);
    }
  }
}
