/**
 * About how much memory a history message holds: the length of its texts,
 * tool arguments and output, image and replay bytes, plus a fixed amount for
 * the objects around them. Caches of histories are bounded by this, not by a
 * count of messages, because one message may be a few bytes or a file of
 * megabytes. Computed once per message object (a message is not changed once
 * made).
 */
import type { ContentPart, Message } from "./gen/byok/v1/history_pb.js";

/** What the objects of a message and of each of its parts take besides their data (an estimate). */
const MESSAGE_OVERHEAD = 200;
const PART_OVERHEAD = 100;

const sizes = new WeakMap<Message, number>();

function partSize(content: readonly ContentPart[]): number {
  let size = 0;
  for (const { part } of content) {
    size += PART_OVERHEAD;
    switch (part.case) {
      case "text":
      case "reasoning":
        size += part.value.text.length;
        break;
      case "image":
        size += part.value.data.length + part.value.mimeType.length;
        break;
      case "toolCall":
        size += part.value.callId.length + part.value.name.length + part.value.argumentsJson.length;
        break;
      case undefined:
        break;
    }
  }
  return size;
}

export function messageSize(message: Message): number {
  const known = sizes.get(message);
  if (known !== undefined) return known;
  const body = message.body;
  let size = MESSAGE_OVERHEAD;
  switch (body.case) {
    case "user":
      size += body.value.clientId.length + partSize(body.value.content);
      break;
    case "assistant":
      size += partSize(body.value.content) + (body.value.replay?.data.length ?? 0);
      break;
    case "toolResult":
      size += body.value.callId.length + body.value.toolName.length + body.value.content.length;
      break;
    case undefined:
      break;
  }
  sizes.set(message, size);
  return size;
}

/** The sum of messageSize over a history. */
export function historySize(messages: readonly Message[]): number {
  let size = 0;
  for (const message of messages) size += messageSize(message);
  return size;
}
