/**
 * The few bodies the proxy must read (BidiAppend, RunSSE request, model lists,
 * server config): bounded reads, HTTP content decoding and Connect envelope
 * parsing. Forwarded bytes are always the original ones; decoding here only
 * serves routing decisions and the model-list merge.
 */
import type { IncomingMessage } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

export type BodyRead = { kind: "ok"; bytes: Buffer } | { kind: "too_large"; limit: number } | { kind: "aborted"; message: string };

export function readBody(stream: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (result: BodyRead): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stream.pause();
        finish({ kind: "too_large", limit });
        return;
      }
      chunks.push(chunk);
    });
    stream.on("end", () => finish({ kind: "ok", bytes: Buffer.concat(chunks, size) }));
    stream.on("error", (err) => finish({ kind: "aborted", message: err.message }));
    stream.on("close", () => finish({ kind: "aborted", message: "connection closed before the body ended" }));
  });
}

export type Decoded = { kind: "ok"; bytes: Buffer } | { kind: "unsupported"; encoding: string } | { kind: "corrupt"; message: string };

/** Undo a Content-Encoding / connect-content-encoding (identity, gzip, deflate, br). */
export function decodeContent(bytes: Buffer, encoding: string | undefined): Decoded {
  const name = (encoding ?? "identity").trim().toLowerCase();
  try {
    switch (name) {
      case "":
      case "identity":
        return { kind: "ok", bytes };
      case "gzip":
      case "x-gzip":
        return { kind: "ok", bytes: gunzipSync(bytes) };
      case "deflate":
        return { kind: "ok", bytes: inflateSync(bytes) };
      case "br":
        return { kind: "ok", bytes: brotliDecompressSync(bytes) };
      default:
        return { kind: "unsupported", encoding: name };
    }
  } catch (err) {
    return { kind: "corrupt", message: (err as Error).message };
  }
}

export interface Envelope {
  flags: number;
  payload: Buffer;
}

export const ENVELOPE_COMPRESSED = 0x01;
export const ENVELOPE_END_STREAM = 0x02;

/** Splits a complete body into Connect envelopes (5-byte header: flags, uint32 BE length). */
export function parseEnvelopes(bytes: Buffer): Envelope[] | undefined {
  const frames: Envelope[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < 5) return undefined;
    const flags = bytes.readUInt8(offset);
    const length = bytes.readUInt32BE(offset + 1);
    if (bytes.length - offset - 5 < length) return undefined;
    frames.push({ flags, payload: bytes.subarray(offset + 5, offset + 5 + length) });
    offset += 5 + length;
  }
  return frames;
}

/** The first header value of `name` (Node joins or arrays repeated headers). */
export function headerValue(headers: IncomingMessage["headers"], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
