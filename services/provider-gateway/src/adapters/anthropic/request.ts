/**
 * ModelRequest -> Anthropic Messages request body (provider-stream-semantics.md §3).
 * - ModelSpec: max output -> `max_tokens` (required by the API: from the
 *   ModelSpec or the model's configured maxOutputTokens, else a CONFIG
 *   rejection; no built-in default). Thinking models: effort "none" ->
 *   `thinking:{type:"disabled"}`; a configured thinkingBudgetTokens ->
 *   budgeted `thinking:{type:"enabled", budget_tokens}` (older models);
 *   otherwise `thinking:{type:"adaptive"}`. Any other effort ->
 *   `output_config:{effort}` (only efforts the model's configuration lists).
 * - PromptSpec: system text -> `system`; tools -> `{name, description, input_schema}`.
 * - History: user text/image blocks; assistant turns of this route rebuilt
 *   with their thinking blocks from the replay state; other assistant turns
 *   as text + tool_use blocks (visible reasoning cannot be replayed: it has no
 *   signature); consecutive tool results -> one user message of tool_result
 *   blocks. Empty text blocks are left out (the API rejects them).
 * - Prompt caching (routes with promptCaching): cache_control breakpoints as
 *   cache-breakpoints.ts places them.
 * - disable_thinking: `thinking:{type:"disabled"}` on thinking models, no
 *   output effort.
 * Deterministic, and `messages` is the last key (byte-prefix property).
 */
import type { AssistantMessage, Message, ModelRequest, ToolResultMessage } from "@byok/contracts";
import type { Route } from "../../routes.ts";
import { RequestRejection } from "../adapter.ts";
import { imageBase64, toolCallArguments, toolParameters, userParts } from "../history.ts";
import { checkSpec, resolveEffort, resolveMaxOutputTokens } from "../model-spec.ts";
import { decodeReplay } from "../replay-codec.ts";
import { mergeLayout, visibleParts } from "../replay-layout.ts";
import { automaticBreakpoint, markHistory, markSystemAndTools } from "./cache-breakpoints.ts";
import { anthropicReplaySchema, type ThinkingBlock } from "./replay.ts";

export interface AnthropicCacheControl {
  type: "ephemeral";
}

type UserBlock = (
  | { type: "text"; text: string }
  | { type: "image"; source: { type: "base64"; media_type: string; data: string } }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: true }
) & { cache_control?: AnthropicCacheControl };

type AssistantBlock = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> } | ThinkingBlock;

export type AnthropicMessage = { role: "user"; content: UserBlock[] } | { role: "assistant"; content: AssistantBlock[] };

export interface AnthropicSystemBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicThinking = { type: "enabled"; budget_tokens: number } | { type: "adaptive" } | { type: "disabled" };

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  stream: true;
  thinking?: AnthropicThinking;
  output_config?: { effort: string };
  system?: string | AnthropicSystemBlock[];
  tools?: AnthropicTool[];
  /** Request-level (automatic) cache breakpoint. */
  cache_control?: AnthropicCacheControl;
  messages: AnthropicMessage[];
}

export function buildAnthropicRequest(request: ModelRequest, route: Route): AnthropicRequestBody {
  checkSpec(request.spec, route);
  const effort = resolveEffort(request.spec, route);
  const maxTokens = resolveMaxOutputTokens(request.spec, route);
  if (maxTokens === undefined)
    throw new RequestRejection("config", `model ${route.id}: Anthropic requires max_tokens; set maxOutputTokens for the model or send a max output in the ModelSpec`);
  const noThinking = request.spec?.disableThinking === true;
  let thinking: AnthropicThinking | undefined;
  if (route.supportsThinking) {
    if (effort === "none" || noThinking) thinking = { type: "disabled" };
    else if (route.thinkingBudgetTokens !== undefined) {
      if (route.thinkingBudgetTokens >= maxTokens)
        throw new RequestRejection("config", `model ${route.id}: thinking budget ${route.thinkingBudgetTokens} must be below max_tokens ${maxTokens}`);
      thinking = { type: "enabled", budget_tokens: route.thinkingBudgetTokens };
    } else thinking = { type: "adaptive" };
  }
  const outputEffort = noThinking || effort === undefined || (effort === "none" && route.supportsThinking) ? undefined : effort;
  const system = request.prompt?.systemText ?? "";
  const tools: AnthropicTool[] = (request.prompt?.tools ?? []).map((t) => ({ name: t.name, description: t.description, input_schema: toolParameters(t) }));
  const messages = anthropicMessages(request.messages, route);
  const head = {
    model: route.upstreamModel,
    max_tokens: maxTokens,
    stream: true as const,
    ...(thinking === undefined ? {} : { thinking }),
    ...(outputEffort === undefined ? {} : { output_config: { effort: outputEffort } }),
  };
  if (!route.promptCaching) {
    return { ...head, ...(system === "" ? {} : { system }), ...(tools.length === 0 ? {} : { tools }), messages };
  }
  const marked = markSystemAndTools(system, tools);
  if (route.promptCacheBreakpoints === "blocks") markHistory(messages);
  return {
    ...head,
    ...(marked.system === undefined ? {} : { system: marked.system }),
    ...(marked.tools.length === 0 ? {} : { tools: marked.tools }),
    ...(route.promptCacheBreakpoints === "automatic" ? { cache_control: automaticBreakpoint() } : {}),
    messages,
  };
}

function anthropicMessages(history: readonly Message[], route: Route): AnthropicMessage[] {
  const messages: AnthropicMessage[] = [];
  let results: UserBlock[] | undefined;
  for (const message of history) {
    const body = message.body;
    if (body.case !== "toolResult") results = undefined;
    switch (body.case) {
      case "user": {
        const content: UserBlock[] = [];
        for (const part of userParts(body.value.content, route)) {
          if (part.kind === "text") {
            if (part.text !== "") content.push({ type: "text", text: part.text });
          } else content.push({ type: "image", source: { type: "base64", media_type: part.image.mimeType, data: imageBase64(part.image) } });
        }
        if (content.length === 0) throw new RequestRejection("invalid_request", "user message without any content");
        messages.push({ role: "user", content });
        break;
      }
      case "assistant": {
        const content = assistantBlocks(body.value, route);
        if (content.length > 0) messages.push({ role: "assistant", content });
        break;
      }
      case "toolResult": {
        if (results === undefined) {
          results = [];
          messages.push({ role: "user", content: results });
        }
        results.push(toolResult(body.value));
        break;
      }
      case undefined:
        throw new RequestRejection("invalid_request", "history message without a body");
      default: {
        const never: never = body;
        throw new RequestRejection("invalid_request", `unknown history message ${JSON.stringify(never)}`);
      }
    }
  }
  return messages;
}

function toolResult(result: ToolResultMessage): UserBlock {
  return { type: "tool_result", tool_use_id: result.callId, content: result.content, ...(result.isError ? { is_error: true as const } : {}) };
}

function assistantBlocks(message: AssistantMessage, route: Route): AssistantBlock[] {
  for (const part of message.content) {
    if (part.part.case === "image" || part.part.case === undefined)
      throw new RequestRejection("invalid_request", `assistant message with a ${part.part.case ?? "empty"} part`);
  }
  const replay = decodeReplay(message.replay, route, anthropicReplaySchema);
  const parts = (replay === undefined ? undefined : mergeLayout<ThinkingBlock>(replay.layout, message.content)) ?? visibleParts(message.content);
  const blocks: AssistantBlock[] = [];
  for (const part of parts) {
    switch (part.kind) {
      case "opaque":
        blocks.push(part.value);
        break;
      case "text":
        if (part.text !== "") blocks.push({ type: "text", text: part.text });
        break;
      case "tool_call":
        blocks.push({ type: "tool_use", id: part.call.callId, name: part.call.name, input: toolCallArguments(part.call) });
        break;
      default: {
        const never: never = part;
        throw new RequestRejection("invalid_request", `unknown assistant part ${JSON.stringify(never)}`);
      }
    }
  }
  return blocks;
}
