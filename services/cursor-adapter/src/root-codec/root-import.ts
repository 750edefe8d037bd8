/**
 * Cursor root blob JSON -> canonical history messages. Inverse of root-json.ts
 * for roots we wrote; for roots written by someone else (Cursor's own server,
 * older gateways) it maps what it can, deterministically:
 * string content, AI-SDK v4 `args` / v5 `input`, v5 tool `output`, data-URL
 * images, image `file` parts. Parts it cannot map (redacted reasoning, remote
 * images, other files) are left out; a tool root becomes one message per result.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  ContentPartSchema,
  MessageSchema,
  ReplayStateSchema,
  type ContentPart,
  type Message,
  type ReplayState,
} from "@byok/contracts";
import { originFromClientId, originFromName } from "./user-origin.ts";

export type RootImport =
  | { kind: "system"; text: string }
  | { kind: "messages"; messages: Message[] }
  /** Valid JSON but not a message we can use (unknown role, ...). */
  | { kind: "ignored"; reason: string };

export class RootParseError extends Error {
  override readonly name = "RootParseError";
}

type Json = Record<string, unknown>;

const decoder = new TextDecoder("utf-8", { fatal: true });

export function importRootBytes(bytes: Uint8Array): RootImport {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch (cause) {
    throw new RootParseError("root blob is not UTF-8", { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new RootParseError("root blob is not JSON", { cause });
  }
  if (!isObject(value)) throw new RootParseError("root blob is not a JSON object");
  return importRoot(value);
}

export function importRoot(root: Json): RootImport {
  switch (root["role"]) {
    case "system":
      return { kind: "system", text: textOfContent(root["content"]) };
    case "user":
      return { kind: "messages", messages: [userMessage(root)] };
    case "assistant":
      return { kind: "messages", messages: [assistantMessage(root)] };
    case "tool":
      return toolMessages(root);
    default:
      return { kind: "ignored", reason: `unknown role ${JSON.stringify(root["role"])}` };
  }
}

function userMessage(root: Json): Message {
  const clientId = typeof root["id"] === "string" ? root["id"] : "";
  const named = byokOptions(root)["origin"];
  const origin = (typeof named === "string" ? originFromName(named) : undefined) ?? originFromClientId(clientId);
  return create(MessageSchema, {
    body: { case: "user", value: { clientId, origin, content: contentParts(root["content"]) } },
  });
}

function assistantMessage(root: Json): Message {
  const replay = replayOf(byokOptions(root)["replay"]);
  return create(MessageSchema, {
    body: {
      case: "assistant",
      value: { content: contentParts(root["content"]), ...(replay === undefined ? {} : { replay }) },
    },
  });
}

function toolMessages(root: Json): RootImport {
  const rootId = typeof root["id"] === "string" ? root["id"] : "";
  const content = Array.isArray(root["content"]) ? root["content"] : [];
  const messages: Message[] = [];
  for (const part of content) {
    if (!isObject(part) || part["type"] !== "tool-result") continue;
    const callId = typeof part["toolCallId"] === "string" ? part["toolCallId"] : rootId;
    const { text, isError } = toolResultText(part);
    messages.push(
      create(MessageSchema, {
        body: {
          case: "toolResult",
          value: { callId, toolName: stringOr(part["toolName"], ""), content: text, isError },
        },
      }),
    );
  }
  if (messages.length === 0) return { kind: "ignored", reason: "tool root without tool-result parts" };
  return { kind: "messages", messages };
}

function toolResultText(part: Json): { text: string; isError: boolean } {
  const flagged = part["isError"] === true;
  if ("result" in part) return { text: jsonText(part["result"]), isError: flagged };
  const output = part["output"];
  if (isObject(output)) {
    const isError = flagged || output["type"] === "error-text" || output["type"] === "error-json";
    switch (output["type"]) {
      case "text":
      case "error-text":
        return { text: stringOr(output["value"], ""), isError };
      case "content":
        return { text: textOfContent(output["value"]), isError };
      default:
        return { text: jsonText(output["value"]), isError };
    }
  }
  return { text: textOfContent(part["experimental_content"]), isError: flagged };
}

function contentParts(content: unknown): ContentPart[] {
  if (typeof content === "string") return [create(ContentPartSchema, { part: { case: "text", value: { text: content } } })];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (isObject(part) ? contentPart(part) : []));
}

function contentPart(part: Json): ContentPart[] {
  const one = (value: MessageInitShape<typeof ContentPartSchema>["part"]) => [create(ContentPartSchema, { part: value })];
  switch (part["type"]) {
    case "text":
      return one({ case: "text", value: { text: stringOr(part["text"], "") } });
    case "reasoning":
      return one({ case: "reasoning", value: { text: stringOr(part["text"], "") } });
    case "image": {
      const image = imageOf(part["image"], part["mimeType"] ?? part["mediaType"]);
      return image === undefined ? [] : one({ case: "image", value: image });
    }
    case "file": {
      const mediaType = part["mediaType"] ?? part["mimeType"];
      if (typeof mediaType !== "string" || !mediaType.startsWith("image/")) return [];
      const image = imageOf(part["data"], mediaType);
      return image === undefined ? [] : one({ case: "image", value: image });
    }
    case "tool-call":
      return one({
        case: "toolCall",
        value: {
          callId: stringOr(part["toolCallId"], ""),
          name: stringOr(part["toolName"], ""),
          argumentsJson: argumentsJsonOf(part),
        },
      });
    default:
      return [];
  }
}

function argumentsJsonOf(part: Json): string {
  const exact = byokOptions(part)["argumentsJson"];
  if (typeof exact === "string") return exact;
  const args = "args" in part ? part["args"] : part["input"];
  if (args === undefined) return "{}";
  if (typeof args === "string" && isJsonText(args)) return args;
  return JSON.stringify(args);
}

function imageOf(image: unknown, mimeType: unknown): { mimeType: string; data: Uint8Array } | undefined {
  if (typeof image !== "string") return undefined;
  const dataUrl = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(image);
  if (dataUrl !== null) {
    const declared = typeof mimeType === "string" ? mimeType : (dataUrl[1] ?? "image/png");
    const payload = dataUrl[3] ?? "";
    const data = dataUrl[2] === undefined ? Buffer.from(decodeURIComponent(payload), "utf8") : Buffer.from(payload, "base64");
    return { mimeType: declared, data: new Uint8Array(data) };
  }
  // Remote URLs cannot be replayed from history.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(image)) return undefined;
  return { mimeType: typeof mimeType === "string" ? mimeType : "image/png", data: new Uint8Array(Buffer.from(image, "base64")) };
}

function replayOf(value: unknown): ReplayState | undefined {
  if (!isObject(value)) return undefined;
  const { kind, route, data } = value;
  if (typeof kind !== "string" || typeof route !== "string" || typeof data !== "string") return undefined;
  return create(ReplayStateSchema, { providerKind: kind, routeId: route, data: new Uint8Array(Buffer.from(data, "base64")) });
}

/** Text of a string content or the concatenated text parts of an array content. */
function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(isObject)
    .map((p) => (p["type"] === "text" && typeof p["text"] === "string" ? p["text"] : ""))
    .join("");
}

function byokOptions(node: Json): Json {
  const options = node["providerOptions"];
  if (!isObject(options)) return {};
  const byok = options["byok"];
  return isObject(byok) ? byok : {};
}

function jsonText(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? "";
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
