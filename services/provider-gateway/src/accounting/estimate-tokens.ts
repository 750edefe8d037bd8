/**
 * Rough prompt sizes for admission (call-accounting.ts): about 4 characters
 * per token over the text a model reads, a flat 1,000 tokens per image and
 * per large base64 payload (so an attached picture does not count as its
 * byte size). Only for limits that must decide before the provider counts;
 * the ledger uses the provider-reported usage.
 */
import { measureMessage, type Message, type ModelRequest } from "@byok/contracts";

const CHARS_PER_TOKEN = 4;
const IMAGE_TOKENS = 1_000;
/** Strings at least this long that look like base64 or a data URL are counted as one image. */
const LARGE_PAYLOAD_CHARS = 4_096;
const BASE64ISH = /^(data:[^,]{1,100},)?[A-Za-z0-9+/=\s]+$/;

/** What the estimate counts in a run of history messages: their text characters and their images. */
export interface MessagesEstimate {
  readonly chars: number;
  readonly images: number;
}

export function estimateMessages(messages: readonly Message[]): MessagesEstimate {
  let chars = 0;
  let images = 0;
  for (const message of messages) {
    const measure = measureMessage(message);
    chars += measure.textChars;
    images += measure.images;
  }
  return { chars, images };
}

/** The sum of two estimates (a held history and what follows it). */
export function addEstimates(a: MessagesEstimate, b: MessagesEstimate): MessagesEstimate {
  return { chars: a.chars + b.chars, images: a.images + b.images };
}

/**
 * The request's input tokens; `messages` = estimateMessages(request.messages) when the caller keeps it
 * already (the gateway does per held history: a long conversation is not walked again on every call).
 */
export function estimateRequestTokens(request: ModelRequest, messages: MessagesEstimate = estimateMessages(request.messages)): number {
  let chars = request.prompt?.systemText.length ?? 0;
  for (const tool of request.prompt?.tools ?? []) chars += tool.name.length + tool.description.length + tool.parametersJson.length;
  return Math.ceil((chars + messages.chars) / CHARS_PER_TOKEN) + messages.images * IMAGE_TOKENS;
}

/** The same estimate over a client's JSON request body (every string value counts). */
export function estimateJsonTokens(value: unknown): number {
  let chars = 0;
  let payloads = 0;
  const walk = (node: unknown): void => {
    if (typeof node === "string") {
      if (node.length >= LARGE_PAYLOAD_CHARS && BASE64ISH.test(node.slice(0, 512)) && BASE64ISH.test(node.slice(-512))) payloads++;
      else chars += node.length;
    } else if (Array.isArray(node)) {
      for (const item of node) walk(item);
    } else if (typeof node === "object" && node !== null) {
      for (const item of Object.values(node)) walk(item);
    }
  };
  walk(value);
  return Math.ceil(chars / CHARS_PER_TOKEN) + payloads * IMAGE_TOKENS;
}
