/**
 * The staged assistant of a checkpoint (pending_tool_calls[0]): an assistant
 * root JSON, possibly with Cursor's providerOptions.cursor metadata
 * (pendingToolCallStartedAtMs, pendingToolExecutionContracts).
 */
import type { AssistantMessage } from "@byok/contracts";
import { importRootBytes, RootParseError } from "./root-import.ts";

export interface PendingAssistant {
  assistant: AssistantMessage;
  /** pendingToolCallStartedAtMs, kept unchanged across resume; 0 when absent. */
  startedAtMs: bigint;
  hasToolCalls: boolean;
}

export function parsePendingAssistant(json: string): PendingAssistant {
  const imported = importRootBytes(new TextEncoder().encode(json));
  const message = imported.kind === "messages" ? imported.messages[0] : undefined;
  if (message?.body.case !== "assistant") throw new RootParseError("pending tool call entry is not an assistant message");
  const assistant = message.body.value;
  return {
    assistant,
    startedAtMs: startedAtOf(json),
    hasToolCalls: assistant.content.some((p) => p.part.case === "toolCall"),
  };
}

function startedAtOf(json: string): bigint {
  const root = JSON.parse(json) as { providerOptions?: { cursor?: { pendingToolCallStartedAtMs?: unknown } } };
  const value = root.providerOptions?.cursor?.pendingToolCallStartedAtMs;
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : 0n;
}
