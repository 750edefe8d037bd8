/**
 * session/load: the conversation's stored history as the session updates a
 * live session would have shown: the member's messages as user_message_chunk
 * (text as typed, images), the model's reasoning and text as
 * agent_thought_chunk / agent_message_chunk, each tool call as a `tool_call`
 * and its result as a `tool_call_update` (completed or failed, the result
 * text shortened). Context messages the gateway injected are not shown.
 */
import { UserOrigin, type Message } from "@byok/contracts";
import type { SessionUpdate } from "../acp/acp-types.ts";
import { announcedCall, describeCall } from "../tools/tool-view.ts";

/** Characters of a tool result shown in a replayed call. */
const RESULT_PREVIEW_CHARS = 2_000;

export function replayUpdates(history: readonly Message[]): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of history) {
    const body = message.body;
    switch (body.case) {
      case "user":
        if (body.value.origin !== UserOrigin.USER) break;
        for (const part of body.value.content) {
          if (part.part.case === "text") updates.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: part.part.value.text } });
          else if (part.part.case === "image") {
            updates.push({ sessionUpdate: "user_message_chunk", content: { type: "image", mimeType: part.part.value.mimeType, data: Buffer.from(part.part.value.data).toString("base64") } });
          }
        }
        break;
      case "assistant":
        for (const part of body.value.content) {
          const p = part.part;
          switch (p.case) {
            case "reasoning":
              if (p.value.text !== "") updates.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: p.value.text } });
              break;
            case "text":
              if (p.value.text !== "") updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: p.value.text } });
              break;
            case "toolCall": {
              const described = describeCall(p.value.name, p.value.argumentsJson);
              updates.push({
                sessionUpdate: "tool_call",
                ...announcedCall(p.value.callId, p.value.name),
                title: described.title,
                locations: described.locations,
                rawInput: described.rawInput,
              });
              break;
            }
            case "image":
            case undefined:
              break;
            default: {
              const unreachable: never = p;
              throw new Error(`unknown content part ${String(unreachable)}`);
            }
          }
        }
        break;
      case "toolResult": {
        const r = body.value;
        const text = r.content.length > RESULT_PREVIEW_CHARS ? `${r.content.slice(0, RESULT_PREVIEW_CHARS)}\n[...]` : r.content;
        updates.push({
          sessionUpdate: "tool_call_update",
          toolCallId: r.callId,
          status: r.isError ? "failed" : "completed",
          content: [{ type: "content", content: { type: "text", text } }],
        });
        break;
      }
      case undefined:
        break;
      default: {
        const unreachable: never = body;
        throw new Error(`unknown message ${String(unreachable)}`);
      }
    }
  }
  return updates;
}
