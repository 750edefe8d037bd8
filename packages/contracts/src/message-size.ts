/**
 * What a history message amounts to, measured once per message object (a
 * message is not changed once made):
 * - `size`: about how much memory it holds (its texts, tool arguments and
 *   output, image and replay bytes, ids, plus a fixed amount for the objects
 *   around them). Caches of histories are bounded by this, not by a count of
 *   messages, because one message may be a few bytes or a file of megabytes.
 * - `textChars` and `images`: what a model reads (text and reasoning, tool
 *   calls' names and arguments, tool output) and how many images, for
 *   estimates of its input tokens.
 */
import type { ContentPart, Message } from "./gen/byok/v1/history_pb.js";

export interface MessageMeasure {
  readonly size: number;
  readonly textChars: number;
  readonly images: number;
}

/** What the objects of a message and of each of its parts take besides their data (an estimate). */
const MESSAGE_OVERHEAD = 200;
const PART_OVERHEAD = 100;

const measures = new WeakMap<Message, MessageMeasure>();

interface Tally {
  size: number;
  textChars: number;
  images: number;
}

function addParts(tally: Tally, content: readonly ContentPart[]): void {
  for (const { part } of content) {
    tally.size += PART_OVERHEAD;
    switch (part.case) {
      case "text":
      case "reasoning":
        tally.size += part.value.text.length;
        tally.textChars += part.value.text.length;
        break;
      case "image":
        tally.size += part.value.data.length + part.value.mimeType.length;
        tally.images += 1;
        break;
      case "toolCall": {
        const read = part.value.name.length + part.value.argumentsJson.length;
        tally.size += part.value.callId.length + read;
        tally.textChars += read;
        break;
      }
      case undefined:
        break;
    }
  }
}

export function measureMessage(message: Message): MessageMeasure {
  const known = measures.get(message);
  if (known !== undefined) return known;
  const tally: Tally = { size: MESSAGE_OVERHEAD, textChars: 0, images: 0 };
  const body = message.body;
  switch (body.case) {
    case "user":
      tally.size += body.value.clientId.length;
      addParts(tally, body.value.content);
      break;
    case "assistant":
      tally.size += body.value.replay?.data.length ?? 0;
      addParts(tally, body.value.content);
      break;
    case "toolResult":
      tally.size += body.value.callId.length + body.value.toolName.length + body.value.content.length;
      tally.textChars += body.value.content.length;
      break;
    case undefined:
      break;
  }
  measures.set(message, tally);
  return tally;
}

export function messageSize(message: Message): number {
  return measureMessage(message).size;
}

/** The sum of messageSize over a history. */
export function historySize(messages: readonly Message[]): number {
  let size = 0;
  for (const message of messages) size += measureMessage(message).size;
  return size;
}
