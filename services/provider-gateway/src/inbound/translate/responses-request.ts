/**
 * An OpenAI Responses request -> ModelRequest (for a route of another kind).
 * Stateless only: the whole conversation in `input` (previous_response_id and
 * item references are refused: the gateway keeps no responses). `instructions`
 * and leading system/developer messages -> the system text; consecutive
 * assistant-side items (reasoning summaries as the visible copy, assistant
 * messages, function calls) -> one assistant message; function_call_output ->
 * tool results; flat function tools; `max_output_tokens`; `reasoning.effort`.
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

/** Item types of hosted tools, custom (freeform) and local shell tools: left out like those tools themselves. */
const SKIPPED_ITEMS = new Set(["custom_tool_call", "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "web_search_call", "file_search_call", "computer_call", "computer_call_output", "image_generation_call", "code_interpreter_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call"]);

export function responsesRequest(body: Record<string, unknown>, ctx: DecodeContext): ModelRequest {
  if (body["previous_response_id"] !== undefined && body["previous_response_id"] !== null)
    throw invalid("previous_response_id", "the gateway keeps no responses: send the whole conversation in input (store: false)");
  const system: string[] = typeof body["instructions"] === "string" && body["instructions"] !== "" ? [body["instructions"]] : [];
  const messages: MessageInit[] = [];
  const toolNames = new Map<string, string>();
  let turn: PartInit[] | undefined;
  const assistantParts = (): PartInit[] => {
    if (turn === undefined) {
      turn = [];
      messages.push(assistantMessage(turn));
    }
    return turn;
  };
  const input = body["input"];
  const items: unknown[] = typeof input === "string" ? [{ type: "message", role: "user", content: input }] : (input as unknown[]);
  items.forEach((raw, i) => {
    const p = `input.${i}`;
    const item = requireRecord(raw, p);
    const type = item["type"] ?? (item["role"] !== undefined ? "message" : undefined);
    switch (type) {
      case "message": {
        const role = item["role"];
        if (role === "assistant") {
          const text = contentText(item["content"], `${p}.content`, ["output_text", "refusal", "input_text", "text"]);
          if (text !== "") assistantParts().push(textPart(text));
          return;
        }
        turn = undefined;
        if (role === "system" || role === "developer") {
          systemOrUserMessage(contentText(item["content"], `${p}.content`, ["input_text", "text"]), system, messages);
          return;
        }
        if (role !== "user") throw invalid(`${p}.role`, `role ${JSON.stringify(role)} cannot be translated (user, assistant, system, developer)`);
        messages.push(userMessage(userContent(item["content"], `${p}.content`)));
        return;
      }
      case "reasoning": {
        const summary = Array.isArray(item["summary"]) ? item["summary"] : [];
        const text = summary.map((s) => (isRecord(s) && typeof s["text"] === "string" ? s["text"] : "")).join("\n\n");
        if (text !== "") assistantParts().push(reasoningPart(text));
        return;
      }
      case "function_call": {
        const callId = requireString(item["call_id"], `${p}.call_id`);
        const name = requireString(item["name"], `${p}.name`);
        toolNames.set(callId, name);
        assistantParts().push(toolCallPart(callId, name, typeof item["arguments"] === "string" ? item["arguments"] : ""));
        return;
      }
      case "function_call_output": {
        turn = undefined;
        const callId = requireString(item["call_id"], `${p}.call_id`);
        messages.push(toolResultMessage(callId, toolNames.get(callId) ?? "", contentText(item["output"], `${p}.output`, ["input_text", "output_text", "text"], "note"), false));
        return;
      }
      case "item_reference":
        throw invalid(`${p}.type`, "item references need stored responses, which the gateway does not keep");
      default:
        if (typeof type === "string" && SKIPPED_ITEMS.has(type)) return;
        throw invalid(`${p}.type`, `input item type ${JSON.stringify(type)} cannot be translated`);
    }
  });
  const reasoning = isRecord(body["reasoning"]) ? body["reasoning"] : {};
  return neutralRequest(ctx, {
    systemText: system.join("\n\n"),
    tools: responsesTools(body["tools"]),
    messages,
    maxOutputTokens: optionalNumber(body["max_output_tokens"], "max_output_tokens"),
    effort: typeof reasoning["effort"] === "string" ? reasoning["effort"] : undefined,
  });
}

function userContent(content: unknown, param: string): PartInit[] {
  return userContentParts(content, param, (part, pp) => {
    switch (part["type"]) {
      case "input_text":
      case "text":
        return textPart(requireString(part["text"], `${pp}.text`));
      case "input_image":
        return imageFromUrl(part["image_url"], `${pp}.image_url`);
      default:
        throw invalid(`${pp}.type`, `content part type ${JSON.stringify(part["type"])} cannot be translated (input_text, input_image)`);
    }
  });
}

/** Function tools; hosted tools (web_search, file_search, ...) are left out. */
function responsesTools(tools: unknown): ToolInit[] {
  return toolList(tools, (tool, tp) => (tool["type"] === "function" ? toolDefinition(tool["name"], tool["description"], tool["parameters"], tp) : undefined));
}
