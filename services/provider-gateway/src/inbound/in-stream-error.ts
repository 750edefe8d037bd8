/**
 * An error after the first byte, as the client's own stream reports one:
 * chat `data: {"error":{...}}` (the OpenAI SDKs raise it), Responses
 * `event: error` with code/message at the top level, Anthropic `event: error`
 * with the Anthropic error body.
 */
import { errorBody, type InboundError } from "./client-errors.ts";
import type { ClientFormat } from "./client-format.ts";

export function inStreamError(format: ClientFormat, error: InboundError, sequenceNumber?: number): string {
  switch (format) {
    case "openai-chat":
      return `data: ${JSON.stringify(errorBody(format, error))}\n\n`;
    case "openai-responses": {
      const inner = errorBody(format, error)["error"] as Record<string, unknown>;
      const event = { type: "error", code: error.code ?? inner["type"], message: error.message, param: error.param ?? null, ...(sequenceNumber === undefined ? {} : { sequence_number: sequenceNumber }) };
      return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
    }
    case "anthropic":
      return `event: error\ndata: ${JSON.stringify(errorBody(format, error))}\n\n`;
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}
