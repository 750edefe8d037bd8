/**
 * Writing answers on the HTTP front: JSON bodies, error answers in the
 * client's format (before the first byte) and the head of an SSE answer.
 */
import type { ServerResponse } from "node:http";
import { errorBody, errorHeaders, type InboundError } from "./client-errors.ts";
import type { ClientFormat } from "./client-format.ts";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** An error answer in the client's format; a stream already started gets nothing more here (see the encoders). */
export function sendError(res: ServerResponse, format: ClientFormat, error: InboundError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, error.status, errorBody(format, error), errorHeaders(error));
}

/** The headers of an SSE answer, sent at once. */
export function startSse(res: ServerResponse, contentType = "text/event-stream"): void {
  sseHead(res, contentType);
  res.flushHeaders();
}

/**
 * The headers of an SSE answer, left to go out with the first write (one
 * socket write for both); the caller flushes them if nothing is written in
 * the same event-loop turn.
 */
export function sseHead(res: ServerResponse, contentType = "text/event-stream"): void {
  res.writeHead(200, { "content-type": contentType, "cache-control": "no-cache", "x-accel-buffering": "no" });
}
