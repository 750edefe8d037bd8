/**
 * ModelRequest -> Chat Completions request body (provider-stream-semantics.md §1).
 * - ModelSpec: effort -> `reasoning_effort`, max output -> `max_completion_tokens`.
 * - PromptSpec: system text -> a leading `system` message; tools -> nested
 *   `{type:"function", function:{name, description, parameters}}`.
 * - History: user text/images (a lone text part as a plain string), assistant
 *   text (`null` next to tool calls) + `tool_calls` with the arguments string
 *   byte for byte, `role:"tool"` results. The route's own reasoning text goes
 *   back only when the route replays it (see replay.ts).
 * Deterministic: fixed key order, no ids or clocks; `messages` is the last key
 * so the body of call n, minus its closing brackets, is a byte prefix of call n+1.
 */
import type { AssistantMessage, Message, ModelRequest } from "@byok/contracts";
import type { Route } from "../../routes.ts";
import { RequestRejection } from "../adapter.ts";
import { checkToolCallArguments, imageDataUrl, toolParameters, userParts } from "../history.ts";
import { checkSpec, resolveEffort, resolveMaxOutputTokens } from "../model-spec.ts";
import { decodeReplay } from "../replay-codec.ts";
import { chatReplaySchema } from "./replay.ts";

type ChatContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatContentPart[] }
  | {
      role: "assistant";
      content: string | null;
      reasoning_content?: string;
      reasoning?: string;
      tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
    }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ChatRequestBody {
  model: string;
  stream: true;
  stream_options: { include_usage: true };
  reasoning_effort?: string;
  max_completion_tokens?: number;
  tools?: Array<{ type: "function"; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
  messages: ChatMessage[];
}

export function buildChatRequest(request: ModelRequest, route: Route): ChatRequestBody {
  checkSpec(request.spec, route);
  const effort = resolveEffort(request.spec, route);
  const maxTokens = resolveMaxOutputTokens(request.spec, route);
  const tools = request.prompt?.tools ?? [];
  const messages: ChatMessage[] = [];
  const system = request.prompt?.systemText ?? "";
  if (system !== "") messages.push({ role: "system", content: system });
  for (const message of request.messages) messages.push(chatMessage(message, route));
  return {
    model: route.upstreamModel,
    stream: true,
    stream_options: { include_usage: true },
    ...(effort === undefined ? {} : { reasoning_effort: effort }),
    ...(maxTokens === undefined ? {} : { max_completion_tokens: maxTokens }),
    ...(tools.length === 0
      ? {}
      : { tools: tools.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: toolParameters(t) } })) }),
    messages,
  };
}

function chatMessage(message: Message, route: Route): ChatMessage {
  const body = message.body;
  switch (body.case) {
    case "user": {
      const parts = userParts(body.value.content, route);
      const only = parts[0];
      if (parts.length === 1 && only?.kind === "text") return { role: "user", content: only.text };
      return {
        role: "user",
        content: parts.map((p) => (p.kind === "text" ? { type: "text" as const, text: p.text } : { type: "image_url" as const, image_url: { url: imageDataUrl(p.image) } })),
      };
    }
    case "assistant":
      return assistantMessage(body.value, route);
    case "toolResult":
      return { role: "tool", tool_call_id: body.value.callId, content: body.value.content };
    case undefined:
      throw new RequestRejection("invalid_request", "history message without a body");
    default: {
      const never: never = body;
      throw new RequestRejection("invalid_request", `unknown history message ${JSON.stringify(never)}`);
    }
  }
}

function assistantMessage(message: AssistantMessage, route: Route): ChatMessage {
  let text = "";
  const toolCalls: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }> = [];
  for (const part of message.content) {
    switch (part.part.case) {
      case "text":
        text += part.part.value.text;
        break;
      case "toolCall":
        toolCalls.push({ id: part.part.value.callId, type: "function", function: { name: part.part.value.name, arguments: checkToolCallArguments(part.part.value) } });
        break;
      case "reasoning":
        // Visible reasoning is never sent as reasoning_content; only this route's replay state is.
        break;
      case "image":
      case undefined:
        throw new RequestRejection("invalid_request", `assistant message with a ${part.part.case ?? "empty"} part`);
      default: {
        const never: never = part.part;
        throw new RequestRejection("invalid_request", `unknown content part ${JSON.stringify(never)}`);
      }
    }
  }
  const replay = route.replayReasoningContent ? decodeReplay(message.replay, route, chatReplaySchema) : undefined;
  const reasoning = replay?.reasoning;
  return {
    role: "assistant",
    content: text === "" && toolCalls.length > 0 ? null : text,
    ...(reasoning === undefined || reasoning.text === "" ? {} : { [reasoning.field]: reasoning.text }),
    ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
  };
}
