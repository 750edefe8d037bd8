/**
 * The staged checkpoint's pending_tool_calls entry (cursor-agent-protocol §4.5):
 * the assistant root JSON plus `providerOptions.cursor` with
 * pendingToolCallStartedAtMs and one pendingToolExecutionContracts entry per
 * tool call. On resume the same JSON gives back the assistant (same call ids)
 * and the original start time.
 */
import { create } from "@bufbuild/protobuf";
import { MessageSchema, type AssistantMessage, type ToolCallPart } from "@byok/contracts";
import { importRoot } from "../root-codec/root-import.ts";
import { rootJsonOf } from "../root-codec/root-json.ts";
import { isJsonObject } from "./tool-args.ts";

export interface PendingToolCallsInput {
  assistant: AssistantMessage;
  /** When the round's tools started; unchanged across resume. */
  startedAtMs: number;
  /** The run's tool names in PromptSpec order. */
  allowedToolNames: readonly string[];
  /** Names of the run's dynamic MCP tools. */
  dynamicToolNames: ReadonlySet<string>;
}

interface ExecutionContract {
  toolCallId: string;
  outerToolName: string;
  toolIdentifier: string;
  isDynamic: boolean;
  allowedToolNames: string[];
  argumentError?: string;
}

/** Tool names whose identifier is not the plain SCREAMING_SNAKE form. */
const SPECIAL_IDENTIFIERS: Record<string, string> = {
  CallMcpTool: "MCP",
  CreatePlan: "CREATE_PLAN_V2",
  UpdateCurrentStep: "COMMUNICATE_UPDATE",
};

/** `StrReplace` -> `STR_REPLACE`, `CallMcpTool` and dynamic MCP tools -> `MCP`. */
export function toolIdentifierOf(name: string, isDynamic: boolean): string {
  if (isDynamic) return "MCP";
  const special = SPECIAL_IDENTIFIERS[name];
  if (special !== undefined) return special;
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase();
}

/** The JSON string for ConversationStateStructure.pending_tool_calls. */
export function buildPendingToolCallsJson(input: PendingToolCallsInput): string {
  const root = JSON.parse(rootJsonOf(create(MessageSchema, { body: { case: "assistant", value: input.assistant } }))) as Record<string, unknown>;
  const calls = toolCallsOf(input.assistant);
  if (calls.length === 0) return JSON.stringify(root);
  const contracts: Record<string, ExecutionContract> = {};
  for (const call of calls) {
    const isDynamic = input.dynamicToolNames.has(call.name);
    const contract: ExecutionContract = {
      toolCallId: call.callId,
      outerToolName: call.name,
      toolIdentifier: toolIdentifierOf(call.name, isDynamic),
      isDynamic,
      allowedToolNames: [...input.allowedToolNames],
    };
    const argumentError = argumentErrorOf(call.argumentsJson);
    if (argumentError !== undefined) contract.argumentError = argumentError;
    contracts[call.callId] = contract;
  }
  const providerOptions = isJsonObject(root["providerOptions"]) ? root["providerOptions"] : {};
  root["providerOptions"] = {
    ...providerOptions,
    cursor: {
      pendingToolCallStartedAtMs: Math.trunc(input.startedAtMs),
      pendingToolExecutionContracts: contracts,
    },
  };
  return JSON.stringify(root);
}

export type PendingToolCalls =
  | {
      kind: "ok";
      assistant: AssistantMessage;
      /** The assistant's tool calls in order (empty for a staged final answer). */
      calls: ToolCallPart[];
      /** pendingToolCallStartedAtMs; undefined when the JSON has none. */
      startedAtMs: number | undefined;
    }
  | { kind: "invalid"; message: string };

/** Parses a pending_tool_calls entry of a client checkpoint (resume). */
export function parsePendingToolCallsJson(json: string): PendingToolCalls {
  let root: unknown;
  try {
    root = JSON.parse(json);
  } catch (cause) {
    return { kind: "invalid", message: `pending tool calls are not JSON: ${(cause as Error).message}` };
  }
  if (!isJsonObject(root) || root["role"] !== "assistant") return { kind: "invalid", message: "pending tool calls are not an assistant message" };
  const imported = importRoot(root);
  const message = imported.kind === "messages" ? imported.messages[0] : undefined;
  if (message === undefined || message.body.case !== "assistant") return { kind: "invalid", message: "pending assistant message cannot be read" };
  const assistant = message.body.value;
  const calls = toolCallsOf(assistant);
  const ids = calls.map((c) => c.callId);
  if (ids.some((id) => id === "")) return { kind: "invalid", message: "a pending tool call has no id" };
  if (new Set(ids).size !== ids.length) return { kind: "invalid", message: "pending tool call ids are not unique" };

  const cursor = isJsonObject(root["providerOptions"]) ? root["providerOptions"]["cursor"] : undefined;
  let startedAtMs: number | undefined;
  if (isJsonObject(cursor) && cursor["pendingToolCallStartedAtMs"] !== undefined) {
    const value = cursor["pendingToolCallStartedAtMs"];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      return { kind: "invalid", message: "pendingToolCallStartedAtMs is not a timestamp" };
    }
    startedAtMs = value;
  }
  const contracts = isJsonObject(cursor) ? cursor["pendingToolExecutionContracts"] : undefined;
  if (isJsonObject(contracts)) {
    for (const id of Object.keys(contracts)) {
      if (!ids.includes(id)) return { kind: "invalid", message: `pending contract for unknown tool call ${JSON.stringify(id)}` };
    }
  }
  return { kind: "ok", assistant, calls, startedAtMs };
}

function toolCallsOf(assistant: AssistantMessage): ToolCallPart[] {
  return assistant.content.flatMap((part) => (part.part.case === "toolCall" ? [part.part.value] : []));
}

function argumentErrorOf(argumentsJson: string): string | undefined {
  try {
    return isJsonObject(JSON.parse(argumentsJson)) ? undefined : "arguments are not a JSON object";
  } catch (cause) {
    return `arguments are not valid JSON: ${(cause as Error).message}`;
  }
}
