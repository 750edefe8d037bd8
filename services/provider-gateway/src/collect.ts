/**
 * Summary of one call's ModelEvents: what the replay CLI prints as its final
 * line and what tests compare with a fixture. Also rebuilds the assistant
 * message a caller stores for a completed call (one part per non-empty block,
 * in block order, plus the replay state), so tests can feed it into the next
 * request like a run would.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { AssistantMessageSchema, ModelFailureKind, StopReason, type AssistantMessage, type ContentPartSchema } from "@byok/contracts";
import type { ModelEventBody } from "./events.ts";

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

type Block = { kind: "text" | "thinking"; text: string } | { kind: "tool"; callId: string; name: string; args: string; argumentsJson: string | undefined };

export function summarizeEvents(events: readonly ModelEventBody[]): CallSummary {
  const blocks = collectBlocks(events);
  let usage: Record<string, number> | null = null;
  let replay: CallSummary["replay"] = null;
  let failure: CallSummary["failure"] = null;
  let stopReason: CallSummary["stopReason"] = null;
  for (const event of events) {
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
  const ordered = [...blocks.values()];
  return {
    outcome: failure !== null ? "failed" : stopReason !== null ? "ok" : "unfinished",
    stopReason,
    text: ordered.map((b) => (b.kind === "text" ? b.text : "")).join(""),
    thinking: ordered.map((b) => (b.kind === "thinking" ? b.text : "")).join(""),
    toolCalls: ordered.flatMap((b) => (b.kind === "tool" ? [{ callId: b.callId, name: b.name, argumentsJson: b.argumentsJson ?? b.args }] : [])),
    usage,
    replay,
    failure,
  };
}

/** The assistant message of a completed call: one part per non-empty block, in block order, plus the replay state. */
export function assistantMessageOf(events: readonly ModelEventBody[]): AssistantMessage {
  const content: MessageInitShape<typeof ContentPartSchema>[] = [];
  for (const block of collectBlocks(events).values()) {
    if (block.kind === "tool") content.push({ part: { case: "toolCall", value: { callId: block.callId, name: block.name, argumentsJson: block.argumentsJson ?? "{}" } } });
    else if (block.text !== "") content.push({ part: block.kind === "text" ? { case: "text", value: { text: block.text } } : { case: "reasoning", value: { text: block.text } } });
  }
  const replay = events.find((e) => e.case === "replay");
  return create(AssistantMessageSchema, { content, ...(replay?.case === "replay" ? { replay: replay.value } : {}) });
}

function collectBlocks(events: readonly ModelEventBody[]): Map<number, Block> {
  const blocks = new Map<number, Block>();
  const sorted = (): Map<number, Block> => new Map([...blocks.entries()].sort(([a], [b]) => a - b));
  for (const event of events) {
    switch (event.case) {
      case "textStart":
        blocks.set(event.value.index ?? 0, { kind: "text", text: "" });
        break;
      case "thinkingStart":
        blocks.set(event.value.index ?? 0, { kind: "thinking", text: "" });
        break;
      case "textDelta":
      case "thinkingDelta": {
        const block = blocks.get(event.value.index ?? 0);
        if (block !== undefined && block.kind !== "tool") block.text += event.value.text ?? "";
        break;
      }
      case "toolCallStart":
        blocks.set(event.value.index ?? 0, { kind: "tool", callId: event.value.callId ?? "", name: event.value.name ?? "", args: "", argumentsJson: undefined });
        break;
      case "toolCallArgsDelta": {
        const block = blocks.get(event.value.index ?? 0);
        if (block?.kind === "tool") block.args += event.value.delta ?? "";
        break;
      }
      case "toolCallEnd": {
        const block = blocks.get(event.value.index ?? 0);
        if (block?.kind === "tool") block.argumentsJson = event.value.argumentsJson ?? "";
        break;
      }
      default:
        break;
    }
  }
  return sorted();
}

function decodeJson(data: Uint8Array): unknown {
  const text = new TextDecoder().decode(data);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
