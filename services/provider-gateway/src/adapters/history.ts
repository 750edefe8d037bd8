/**
 * Reading the neutral history for request builders: the pieces every adapter
 * needs and must reject the same way (typed parts in the wrong message,
 * images on a route without image support, arguments that are not JSON).
 */
import type { ContentPart, ImagePart, ToolCallPart, ToolDefinition } from "@byok/contracts";
import type { Route } from "../routes.ts";
import { RequestRejection } from "./adapter.ts";

export type UserPart = { readonly kind: "text"; readonly text: string } | { readonly kind: "image"; readonly image: ImagePart };

/** A user message's parts: text and images only. */
export function userParts(content: readonly ContentPart[], route: Route): UserPart[] {
  const parts: UserPart[] = [];
  for (const part of content) {
    switch (part.part.case) {
      case "text":
        parts.push({ kind: "text", text: part.part.value.text });
        break;
      case "image":
        if (!route.supportsImages) throw new RequestRejection("config", `model ${route.id} does not accept images`);
        if (part.part.value.mimeType === "") throw new RequestRejection("invalid_request", "image part without a MIME type");
        parts.push({ kind: "image", image: part.part.value });
        break;
      case "reasoning":
      case "toolCall":
      case undefined:
        throw new RequestRejection("invalid_request", `user message with a ${part.part.case ?? "empty"} part`);
      default: {
        const never: never = part.part;
        throw new RequestRejection("invalid_request", `unknown content part ${JSON.stringify(never)}`);
      }
    }
  }
  return parts;
}

export function imageDataUrl(image: ImagePart): string {
  return `data:${image.mimeType};base64,${Buffer.from(image.data).toString("base64")}`;
}

export function imageBase64(image: ImagePart): string {
  return Buffer.from(image.data).toString("base64");
}

/** Parsed tool schemas by their JSON text: a client sends the same tools on every call. */
const parsedSchemas = new Map<string, Record<string, unknown>>();
/** Distinct schemas kept; past it the oldest go first. */
const PARSED_SCHEMAS_MAX = 1_024;

/**
 * A tool definition's JSON Schema as an object, parsed once per distinct text
 * (the same object for the same text: request builders only serialize it,
 * never change it).
 */
export function toolParameters(tool: ToolDefinition): Record<string, unknown> {
  const text = tool.parametersJson;
  const known = parsedSchemas.get(text);
  if (known !== undefined) return known;
  const parsed = parseObject(text, `tool ${tool.name}: parameters`);
  if (parsedSchemas.size >= PARSED_SCHEMAS_MAX) parsedSchemas.delete(parsedSchemas.keys().next().value as string);
  parsedSchemas.set(text, parsed);
  return parsed;
}

/** A history tool call's arguments as an object. */
export function toolCallArguments(call: ToolCallPart): Record<string, unknown> {
  return parseObject(call.argumentsJson, `tool call ${call.callId}: arguments`);
}

function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RequestRejection("invalid_request", `${what} are not valid JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new RequestRejection("invalid_request", `${what} are not a JSON object`);
  return value as Record<string, unknown>;
}

/** Check that a tool call in history has JSON-object arguments (endpoints that take the string as is). */
export function checkToolCallArguments(call: ToolCallPart): string {
  toolCallArguments(call);
  return call.argumentsJson;
}
