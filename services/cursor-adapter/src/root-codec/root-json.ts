/**
 * Canonical history message -> Cursor root blob JSON (AI-SDK message shape,
 * cursor-agent-protocol §4.3).
 *
 * The output is deterministic: fixed key order, compact, no timestamps. Together
 * with root-import.ts it round-trips exactly (message -> JSON -> message gives an
 * identical message), which is how the store recognises the history of the next
 * turn. Where the AI-SDK shape cannot carry a detail losslessly, the detail rides
 * in `providerOptions.byok` (user origin that the id does not imply, argument
 * JSON text that is not in JSON.stringify form, reasoning replay state).
 */
import {
  type AssistantMessage,
  type ContentPart,
  type Message,
  type ToolResultMessage,
  type UserMessage,
} from "@byok/contracts";
import { originFromClientId, originName } from "./user-origin.ts";

/** Cursor writes "1" as the id of every assistant root; so do we. */
export const ASSISTANT_ROOT_ID = "1";

const encoder = new TextEncoder();

export function rootJsonOf(message: Message): string {
  return JSON.stringify(rootObjectOf(message));
}

export function rootBytesOf(message: Message): Uint8Array {
  return encoder.encode(rootJsonOf(message));
}

export function systemRootJson(systemText: string): string {
  return JSON.stringify({ role: "system", content: systemText });
}

function rootObjectOf(message: Message): object {
  const body = message.body;
  switch (body.case) {
    case "user":
      return userRoot(body.value);
    case "assistant":
      return assistantRoot(body.value);
    case "toolResult":
      return toolRoot(body.value);
    case undefined:
      throw new Error("cannot project a message without a body");
    default: {
      const unreachable: never = body;
      throw new Error(`unknown message body ${String(unreachable)}`);
    }
  }
}

function userRoot(user: UserMessage): object {
  const root: Record<string, unknown> = { role: "user", id: user.clientId, content: user.content.flatMap(partObjectOf) };
  if (originFromClientId(user.clientId) !== user.origin) root["providerOptions"] = { byok: { origin: originName(user.origin) } };
  return root;
}

function assistantRoot(assistant: AssistantMessage): object {
  const root: Record<string, unknown> = { role: "assistant", id: ASSISTANT_ROOT_ID, content: assistant.content.flatMap(partObjectOf) };
  const replay = assistant.replay;
  if (replay !== undefined) {
    root["providerOptions"] = {
      byok: { replay: { kind: replay.providerKind, route: replay.routeId, data: Buffer.from(replay.data).toString("base64") } },
    };
  }
  return root;
}

function toolRoot(result: ToolResultMessage): object {
  return {
    role: "tool",
    id: result.callId,
    content: [
      {
        type: "tool-result",
        toolCallId: result.callId,
        toolName: result.toolName,
        result: result.content,
        experimental_content: [{ type: "text", text: result.content }],
        isError: result.isError,
      },
    ],
  };
}

function partObjectOf(part: ContentPart): object[] {
  const p = part.part;
  switch (p.case) {
    case "text":
      return [{ type: "text", text: p.value.text }];
    case "image":
      return [{ type: "image", image: Buffer.from(p.value.data).toString("base64"), mimeType: p.value.mimeType }];
    case "reasoning":
      return [{ type: "reasoning", text: p.value.text }];
    case "toolCall":
      return [toolCallObject(p.value.callId, p.value.name, p.value.argumentsJson)];
    case undefined:
      return [];
    default: {
      const unreachable: never = p;
      throw new Error(`unknown content part ${String(unreachable)}`);
    }
  }
}

function toolCallObject(callId: string, name: string, argumentsJson: string): object {
  const parsed = parseJson(argumentsJson);
  const args = parsed.ok ? parsed.value : {};
  const call: Record<string, unknown> = { type: "tool-call", toolCallId: callId, toolName: name, args };
  // JSON.parse + JSON.stringify is not always the identity (spacing, number
  // spelling, integer-like keys move first): keep the exact text when it differs.
  if (!parsed.ok || JSON.stringify(args) !== argumentsJson) call["providerOptions"] = { byok: { argumentsJson } };
  return call;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
