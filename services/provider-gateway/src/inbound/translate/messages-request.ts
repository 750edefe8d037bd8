/**
 * An Anthropic Messages request -> ModelRequest (for a route of another kind,
 * or counted). `system` (string or text blocks) -> the system text; user
 * text and base64 images, `tool_result` blocks -> tool results (before the
 * rest of that user message, as the API orders them); assistant text,
 * `thinking` (the visible copy), `tool_use` (input as JSON); custom tools
 * (typed server tools are left out); `max_tokens`; `output_config.effort`, and
 * `thinking:{type:"disabled"}` as effort "none" where the route offers it.
 * cache_control markers carry no meaning on other endpoints and are dropped.
 */
import type { ModelRequest } from "@byok/contracts";
import {
  assistantMessage,
  contentText,
  imageFromBase64,
  invalid,
  isRecord,
  neutralRequest,
  optionalNumber,
  reasoningPart,
  requireRecord,
  requireString,
  textPart,
  toolCallPart,
  toolDefinition,
  toolList,
  toolResultMessage,
  userMessage,
  type DecodeContext,
  type MessageInit,
  type PartInit,
  type ToolInit,
} from "./neutral-request.ts";

/** Assistant block types of server tools: nothing another endpoint can replay. */
const SKIPPED_ASSISTANT_BLOCKS = new Set(["redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result", "mcp_tool_use", "mcp_tool_result"]);

export function messagesRequest(body: Record<string, unknown>, ctx: DecodeContext): ModelRequest {
  const messages: MessageInit[] = [];
  const toolNames = new Map<string, string>();
  (body["messages"] as unknown[]).forEach((raw, i) => {
    const p = `messages.${i}`;
    const message = requireRecord(raw, p);
    const content = message["content"];
    const blocks: unknown[] = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
    if (typeof content !== "string" && !Array.isArray(content)) throw invalid(`${p}.content`, "must be a string or a list of content blocks");
    switch (message["role"]) {
      case "user": {
        const parts: PartInit[] = [];
        blocks.forEach((rawBlock, j) => {
          const bp = `${p}.content.${j}`;
          const block = requireRecord(rawBlock, bp);
          switch (block["type"]) {
            case "text":
              parts.push(textPart(requireString(block["text"], `${bp}.text`)));
              return;
            case "image": {
              const source = requireRecord(block["source"], `${bp}.source`);
              if (source["type"] !== "base64") throw invalid(`${bp}.source.type`, "only base64 images can be passed to a model of another API shape");
              parts.push(imageFromBase64(source["media_type"], source["data"], `${bp}.source`));
              return;
            }
            case "tool_result": {
              const callId = requireString(block["tool_use_id"], `${bp}.tool_use_id`);
              messages.push(toolResultMessage(callId, toolNames.get(callId) ?? "", contentText(block["content"], `${bp}.content`, ["text"], "note"), block["is_error"] === true));
              return;
            }
            default:
              throw invalid(`${bp}.type`, `content block type ${JSON.stringify(block["type"])} cannot be translated (text, image, tool_result)`);
          }
        });
        if (parts.length > 0) messages.push(userMessage(parts));
        return;
      }
      case "assistant": {
        const parts: PartInit[] = [];
        blocks.forEach((rawBlock, j) => {
          const bp = `${p}.content.${j}`;
          const block = requireRecord(rawBlock, bp);
          const type = block["type"];
          switch (type) {
            case "text": {
              const text = requireString(block["text"], `${bp}.text`);
              if (text !== "") parts.push(textPart(text));
              return;
            }
            case "thinking": {
              const text = typeof block["thinking"] === "string" ? block["thinking"] : "";
              if (text !== "") parts.push(reasoningPart(text));
              return;
            }
            case "tool_use": {
              const id = requireString(block["id"], `${bp}.id`);
              const name = requireString(block["name"], `${bp}.name`);
              toolNames.set(id, name);
              parts.push(toolCallPart(id, name, JSON.stringify(isRecord(block["input"]) ? block["input"] : {})));
              return;
            }
            default:
              if (typeof type === "string" && SKIPPED_ASSISTANT_BLOCKS.has(type)) return;
              throw invalid(`${bp}.type`, `content block type ${JSON.stringify(type)} cannot be translated (text, thinking, tool_use)`);
          }
        });
        messages.push(assistantMessage(parts));
        return;
      }
      default:
        throw invalid(`${p}.role`, `role ${JSON.stringify(message["role"])} is not user or assistant`);
    }
  });
  const outputConfig = isRecord(body["output_config"]) ? body["output_config"] : {};
  const thinking = isRecord(body["thinking"]) ? body["thinking"] : {};
  const maxTokens = optionalNumber(body["max_tokens"], "max_tokens");
  if (maxTokens === undefined && ctx.forCounting !== true) throw invalid("max_tokens", "is required");
  return neutralRequest(ctx, {
    systemText: systemText(body["system"]),
    tools: messagesTools(body["tools"]),
    messages,
    maxOutputTokens: maxTokens,
    effort: typeof outputConfig["effort"] === "string" ? outputConfig["effort"] : thinking["type"] === "disabled" ? "none" : undefined,
  });
}

function systemText(system: unknown): string {
  if (system === undefined || system === null) return "";
  return contentText(system, "system", ["text"]);
}

/** Custom tools; typed server tools (web_search_*, bash_*, text_editor_*, ...) are left out. */
function messagesTools(tools: unknown): ToolInit[] {
  return toolList(tools, (tool, tp) => (tool["type"] !== undefined && tool["type"] !== "custom" ? undefined : toolDefinition(tool["name"], tool["description"], tool["input_schema"], tp)));
}
