/**
 * Summary of one call's ModelEvents: what the replay CLI prints as its final
 * line and what tests compare with a fixture. The blocks come from the shared
 * stream assembly (@byok/model-stream), the same one the run worker builds
 * its assistant message with.
 */
import { ModelFailureKind, StopReason } from "@byok/contracts";
import { ModelStreamAssembly } from "@byok/model-stream";
import type { ModelEventBody } from "../events.ts";

export interface CallSummary {
  readonly outcome: "ok" | "failed" | "unfinished";
  readonly stopReason: "stop" | "tool_use" | null;
  readonly text: string;
  readonly thinking: string;
  readonly toolCalls: Array<{ callId: string; name: string; argumentsJson: string }>;
  readonly usage: Record<string, number> | null;
  /** The replay state with its data decoded as JSON (for display; callers keep it opaque). */
  readonly replay: { providerKind: string; routeId: string; data: unknown } | null;
  readonly failure: { kind: string; message: string; partialText: string; retryable: boolean; httpStatus: number; providerCode: string } | null;
}

export function summarizeEvents(events: readonly ModelEventBody[]): CallSummary {
  const assembly = new ModelStreamAssembly();
  let usage: Record<string, number> | null = null;
  let replay: CallSummary["replay"] = null;
  let failure: CallSummary["failure"] = null;
  let stopReason: CallSummary["stopReason"] = null;
  for (const event of events) {
    assembly.add(event);
    switch (event.case) {
      case "usage": {
        usage = {};
        for (const [key, value] of Object.entries(event.value)) if (typeof value === "bigint" || typeof value === "number") usage[key] = Number(value);
        break;
      }
      case "replay": {
        const data = event.value.data ?? new Uint8Array();
        replay = { providerKind: event.value.providerKind ?? "", routeId: event.value.routeId ?? "", data: decodeJson(data) };
        break;
      }
      case "done":
        stopReason = event.value.reason === StopReason.TOOL_USE ? "tool_use" : "stop";
        break;
      case "failure":
        failure = {
          kind: ModelFailureKind[event.value.kind ?? ModelFailureKind.UNSPECIFIED] ?? String(event.value.kind),
          message: event.value.message ?? "",
          partialText: event.value.partialText ?? "",
          retryable: event.value.retryable ?? false,
          httpStatus: event.value.httpStatus ?? 0,
          providerCode: event.value.providerCode ?? "",
        };
        break;
      default:
        break;
    }
  }
  const blocks = assembly.blocks();
  return {
    outcome: failure !== null ? "failed" : stopReason !== null ? "ok" : "unfinished",
    stopReason,
    text: assembly.partial("text"),
    thinking: assembly.partial("thinking"),
    toolCalls: blocks.flatMap((b) => (b.kind === "tool" ? [{ callId: b.callId, name: b.name, argumentsJson: b.argumentsJson ?? b.streamedArguments }] : [])),
    usage,
    replay,
    failure,
  };
}

function decodeJson(data: Uint8Array): unknown {
  const text = new TextDecoder().decode(data);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
