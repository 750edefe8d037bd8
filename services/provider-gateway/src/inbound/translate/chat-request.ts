/**
 * An OpenAI Chat Completions request -> ModelRequest (for a route of another
 * kind). Leading system/developer messages -> the system text (later ones
 * become user messages, in place); user text and data-URL images; assistant
 * `reasoning_content` (the visible copy), text and `tool_calls` (arguments as
 * sent); `role:"tool"` -> tool results; function tools; `max_completion_tokens`
 * (or `max_tokens`); `reasoning_effort`.
 */
import type { ModelRequest } from "@byok/contracts";
import {
  assistantMessage,
  contentText,
  imageFromUrl,
  invalid,
  isRecord,
  neutralRequest,
  optionalNumber,
  reasoningPart,
  requireRecord,
  requireString,
  systemOrUserMessage,
  textPart,
  toolCallPart,
  toolDefinition,
  toolList,
  toolResultMessage,
  userContentParts,
  userMessage,
  type DecodeContext,
  type MessageInit,
  type PartInit,
  type ToolInit,
} from "./neutral-request.ts";

export function chatRequest(body: Record<string, unknown>, ctx: DecodeContext): ModelRequest {
  const system: string[] = [];
  const messages: MessageInit[] = [];
  const toolNames = new Map<string, string>();
  (body["messages"] as unknown[]).forEach((raw, i) => {
    const p = `messages.${i}`;
    const message = requireRecord(raw, p);
    const role = message["role"];
    switch (role) {
      case "system":
      case "developer":
        systemOrUserMessage(contentText(message["content"], `${p}.content`, ["text"]), system, messages);
        return;
      case "user":
        messages.push(userMessage(userContent(message["content"], `${p}.content`)));
        return;
      case "assistant": {
        const parts: PartInit[] = [];
        const reasoning = message["reasoning_content"] ?? message["reasoning"];
        if (typeof reasoning === "string" && reasoning !== "") parts.push(reasoningPart(reasoning));
        const text = contentText(message["content"], `${p}.content`, ["text", "refusal"]);
        if (text !== "") parts.push(textPart(text));
        const calls = message["tool_calls"];
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls)) throw invalid(`${p}.tool_calls`, "must be a list");
          calls.forEach((rawCall, j) => {
            const cp = `${p}.tool_calls.${j}`;
            const call = requireRecord(rawCall, cp);
            const fn = requireRecord(call["function"], `${cp}.function`);
            const id = requireString(call["id"], `${cp}.id`);
            const name = requireString(fn["name"], `${cp}.function.name`);
            toolNames.set(id, name);
            parts.push(toolCallPart(id, name, typeof fn["arguments"] === "string" ? fn["arguments"] : ""));
          });
        }
        messages.push(assistantMessage(parts));
        return;
      }
      case "tool": {
        const callId = requireString(message["tool_call_id"], `${p}.tool_call_id`);
        messages.push(toolResultMessage(callId, toolNames.get(callId) ?? "", contentText(message["content"], `${p}.content`, ["text"], "note"), false));
        return;
      }
      default:
        throw invalid(`${p}.role`, `role ${JSON.stringify(role)} cannot be translated (system, developer, user, assistant, tool)`);
    }
  });
  return neutralRequest(ctx, {
    systemText: system.join("\n\n"),
    tools: chatTools(body["tools"]),
    messages,
    maxOutputTokens: optionalNumber(body["max_completion_tokens"], "max_completion_tokens") ?? optionalNumber(body["max_tokens"], "max_tokens"),
    effort: typeof body["reasoning_effort"] === "string" ? body["reasoning_effort"] : undefined,
  });
}

function userContent(content: unknown, param: string): PartInit[] {
  return userContentParts(content, param, (part, pp) => {
    switch (part["type"]) {
      case "text":
        return textPart(requireString(part["text"], `${pp}.text`));
      case "image_url": {
        const image = part["image_url"];
        return imageFromUrl(isRecord(image) ? image["url"] : image, `${pp}.image_url.url`);
      }
      default:
        throw invalid(`${pp}.type`, `content part type ${JSON.stringify(part["type"])} cannot be translated (text, image_url)`);
    }
  });
}

/** Function tools; other tool types are left out. */
function chatTools(tools: unknown): ToolInit[] {
  return toolList(tools, (tool, tp) => {
    if (tool["type"] !== "function") return undefined;
    const fn = requireRecord(tool["function"], `${tp}.function`);
    return toolDefinition(fn["name"], fn["description"], fn["parameters"], `${tp}.function`);
  });
}
