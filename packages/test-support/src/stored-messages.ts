/**
 * Readers of the history the store keeps (byok.v1 Message), for assertions in
 * end-to-end tests: a conversation's history at its head, what follows the
 * last user message (the run's own tool loop), the tool call ids of a message
 * and an assistant message's texts.
 */
import type { Message } from "@byok/contracts";
import type { GatewayHarness } from "./gateway-harness.ts";

/** The messages of a conversation's head revision, from the store ([] while it has none). */
export async function storedHistory(gw: Pick<GatewayHarness, "store">, conversationId: string): Promise<Message[]> {
  const conversation = await gw.store("getConversation", { conversationId });
  if (conversation.headRevisionId === "") return [];
  return (await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId })).messages;
}

/** The messages after the last user message (all of them without one). */
export function afterUser(messages: readonly Message[]): Message[] {
  const last = messages.map((m) => m.body.case).lastIndexOf("user");
  return messages.slice(last + 1);
}

/** The call ids of an assistant message's tool calls, or the one a tool result answers; [] for others. */
export function callIdsOf(message: Message): string[] {
  if (message.body.case === "toolResult") return [message.body.value.callId];
  if (message.body.case === "assistant") return message.body.value.content.flatMap((p) => (p.part.case === "toolCall" ? [p.part.value.callId] : []));
  return [];
}

/** The text parts of an assistant message, one string each; [] for others. */
export function textParts(message: Message): string[] {
  return message.body.case === "assistant" ? message.body.value.content.flatMap((p) => (p.part.case === "text" ? [p.part.value.text] : [])) : [];
}
