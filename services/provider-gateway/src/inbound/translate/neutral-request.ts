/**
 * Building the provider-neutral ModelRequest from a client request of another
 * shape (the three *-request.ts decoders share this): model spec within the
 * route's limits, the tools list and tool definitions, user content parts,
 * leading system messages, image parts from base64 / data URLs, tool result
 * text, and 400s that name the offending field.
 *
 * What does not translate: sampling parameters (temperature, top_p, stop
 * sequences), tool_choice / parallel_tool_calls, response formats, hosted or
 * server tools (left out), remote image URLs and files (refused: the gateway
 * fetches nothing), images inside tool results (replaced by a note).
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ModelRequestSchema, type ContentPartSchema, type MessageSchema, type ModelRequest, type ToolDefinitionSchema } from "@byok/contracts";
import { effortSchema } from "@byok/platform";
import type { Route } from "../../routes.ts";
import { InboundError } from "../client-errors.ts";

export type MessageInit = MessageInitShape<typeof MessageSchema>;
export type PartInit = MessageInitShape<typeof ContentPartSchema>;
export type ToolInit = MessageInitShape<typeof ToolDefinitionSchema>;

export interface DecodeContext {
  readonly memberId: string;
  readonly requestId: string;
  readonly route: Route;
  /** count_tokens: no output limit is needed. */
  readonly forCounting?: boolean;
}

export interface NeutralInit {
  readonly systemText: string;
  readonly tools: readonly ToolInit[];
  readonly messages: readonly MessageInit[];
  readonly maxOutputTokens: number | undefined;
  readonly effort: string | undefined;
}

export const IMAGE_IN_TOOL_RESULT = "[an image from the tool result is not passed on by the gateway]";

export function neutralRequest(ctx: DecodeContext, init: NeutralInit): ModelRequest {
  const { route } = ctx;
  // Within the route's limit rather than refused: clients send their own defaults (Claude Code asks for 32000).
  const maxOutputTokens = init.maxOutputTokens === undefined ? undefined : route.maxOutputTokens === undefined ? init.maxOutputTokens : Math.min(init.maxOutputTokens, route.maxOutputTokens);
  const effort = effortSchema.safeParse(init.effort);
  return create(ModelRequestSchema, {
    callId: ctx.requestId,
    runId: "",
    conversationId: "",
    memberId: ctx.memberId,
    spec: {
      modelId: route.id,
      ...(effort.success && route.efforts.includes(effort.data) ? { effort: effort.data } : {}),
      ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    },
    prompt: { mode: "agent", systemText: init.systemText, tools: [...init.tools] },
    messages: [...init.messages],
  });
}

export function invalid(param: string, message: string): InboundError {
  return new InboundError("invalid_request", `${param}: ${message}`, { param });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function requireRecord(value: unknown, param: string): Record<string, unknown> {
  if (!isRecord(value)) throw invalid(param, "must be an object");
  return value;
}

export function requireString(value: unknown, param: string): string {
  if (typeof value !== "string") throw invalid(param, "must be a string");
  return value;
}

export function optionalNumber(value: unknown, param: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) throw invalid(param, "must be a positive integer");
  return value;
}

export function textPart(text: string): PartInit {
  return { part: { case: "text", value: { text } } };
}

export function reasoningPart(text: string): PartInit {
  return { part: { case: "reasoning", value: { text } } };
}

export function toolCallPart(callId: string, name: string, argumentsJson: string): PartInit {
  return { part: { case: "toolCall", value: { callId, name, argumentsJson: argumentsJson.trim() === "" ? "{}" : argumentsJson } } };
}

export function userMessage(content: PartInit[]): MessageInit {
  return { body: { case: "user", value: { content } } };
}

export function assistantMessage(content: PartInit[]): MessageInit {
  return { body: { case: "assistant", value: { content } } };
}

export function toolResultMessage(callId: string, toolName: string, content: string, isError: boolean): MessageInit {
  return { body: { case: "toolResult", value: { callId, toolName, content, isError } } };
}

/**
 * A system/developer message in the conversation: before any other message
 * its text joins the system text, after one it becomes a user message in place.
 */
export function systemOrUserMessage(text: string, system: string[], messages: MessageInit[]): void {
  if (messages.length === 0) system.push(text);
  else messages.push(userMessage([textPart(text)]));
}

/** User content: a string (one text part) or a list of parts, each decoded by `part` (which refuses what it cannot translate). */
export function userContentParts(content: unknown, param: string, part: (part: Record<string, unknown>, param: string) => PartInit): PartInit[] {
  if (typeof content === "string") return [textPart(content)];
  if (!Array.isArray(content)) throw invalid(param, "must be a string or a list of content parts");
  return content.map((raw, i) => part(requireRecord(raw, `${param}.${i}`), `${param}.${i}`));
}

/** The request's `tools` (absent or null: none), each decoded by `definition`; undefined leaves a tool out (a kind another endpoint cannot call). */
export function toolList(tools: unknown, definition: (tool: Record<string, unknown>, param: string) => ToolInit | undefined): ToolInit[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) throw invalid("tools", "must be a list");
  return tools.flatMap((raw, i) => {
    const tool = definition(requireRecord(raw, `tools.${i}`), `tools.${i}`);
    return tool === undefined ? [] : [tool];
  });
}

export function toolDefinition(name: unknown, description: unknown, parameters: unknown, param: string): ToolInit {
  const toolName = requireString(name, `${param}.name`);
  if (toolName === "") throw invalid(`${param}.name`, "must not be empty");
  if (parameters !== undefined && parameters !== null && !isRecord(parameters)) throw invalid(`${param}.parameters`, "must be a JSON schema object");
  return {
    name: toolName,
    description: typeof description === "string" ? description : "",
    parametersJson: JSON.stringify(parameters ?? { type: "object", properties: {} }),
  };
}

/** An image from a `data:` URL; other URLs are refused (the gateway fetches nothing). */
export function imageFromUrl(url: unknown, param: string): PartInit {
  const text = requireString(url, param);
  const match = /^data:([^;,]+)(;base64)?,(.*)$/s.exec(text);
  if (match === null || match[2] === undefined) throw invalid(param, "only base64 data: URLs can be passed to a model of another API shape");
  return imageFromBase64(match[1] as string, match[3] as string, param);
}

export function imageFromBase64(mediaType: unknown, data: unknown, param: string): PartInit {
  const mimeType = requireString(mediaType, `${param}.media_type`);
  const bytes = Buffer.from(requireString(data, `${param}.data`), "base64");
  return { part: { case: "image", value: { mimeType, data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) } } };
}

/**
 * The text of a content field that may be a string or a list of parts with
 * `text` (types listed in `textTypes`); images become IMAGE_IN_TOOL_RESULT
 * when `images` says so, anything else is refused.
 */
export function contentText(content: unknown, param: string, textTypes: readonly string[], images: "note" | "refuse" = "refuse"): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(param, "must be a string or a list of content parts");
  const texts: string[] = [];
  content.forEach((part, i) => {
    const p = requireRecord(part, `${param}.${i}`);
    const type = p["type"];
    if (typeof type === "string" && textTypes.includes(type)) texts.push(requireString(p["text"] ?? p["refusal"] ?? "", `${param}.${i}.text`));
    else if (images === "note" && (type === "image" || type === "input_image" || type === "image_url")) texts.push(IMAGE_IN_TOOL_RESULT);
    else throw invalid(`${param}.${i}.type`, `content part type ${JSON.stringify(type)} cannot be translated here`);
  });
  return texts.join("\n");
}
