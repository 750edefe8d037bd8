/**
 * Connect streaming envelopes as the Cursor client sees them: 1 flag byte
 * (0x01 compressed, 0x02 end-of-stream), a 4-byte big-endian length, then the
 * payload. The reader is incremental: chunks may split a frame anywhere, and a
 * chunk may hold several frames.
 */
import { gunzipSync } from "node:zlib";

export const FLAG_COMPRESSED = 0x01;
export const FLAG_END_STREAM = 0x02;

export interface Envelope {
  /** Flag byte as received (before decompression). */
  readonly flags: number;
  /** Payload, already gunzipped when flag 0x01 was set. */
  readonly payload: Uint8Array;
  /** flags & 0x02: the payload is the EndStream JSON. */
  readonly endStream: boolean;
}

export function encodeEnvelope(payload: Uint8Array, flags = 0): Buffer {
  const out = Buffer.alloc(5 + payload.length);
  out.writeUInt8(flags, 0);
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, 5);
  return out;
}

export class EnvelopeFormatError extends Error {
  override readonly name = "EnvelopeFormatError";
}

/**
 * Accumulates bytes and yields complete envelopes. `push` returns the frames a
 * chunk completed; `pendingBytes` tells whether a frame is cut off (for the
 * caller to report a truncated body at EOF).
 */
export class EnvelopeReader {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly maxPayloadBytes: number;

  constructor(options: { maxPayloadBytes?: number } = {}) {
    this.maxPayloadBytes = options.maxPayloadBytes ?? 64 * 1024 * 1024;
  }

  push(chunk: Uint8Array): Envelope[] {
    this.buffer = this.buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buffer, chunk]);
    const frames: Envelope[] = [];
    for (;;) {
      if (this.buffer.length < 5) break;
      const flags = this.buffer.readUInt8(0);
      const length = this.buffer.readUInt32BE(1);
      if (length > this.maxPayloadBytes) throw new EnvelopeFormatError(`envelope of ${length} bytes exceeds the limit`);
      if (this.buffer.length < 5 + length) break;
      const raw = this.buffer.subarray(5, 5 + length);
      this.buffer = this.buffer.subarray(5 + length);
      const payload = (flags & FLAG_COMPRESSED) !== 0 ? new Uint8Array(gunzipSync(raw)) : new Uint8Array(raw);
      frames.push({ flags, payload, endStream: (flags & FLAG_END_STREAM) !== 0 });
    }
    return frames;
  }

  get pendingBytes(): number {
    return this.buffer.length;
  }
}

/** The EndStream JSON of a Connect server stream. */
export type EndStreamOutcome =
  | { kind: "ok"; metadata?: Record<string, unknown> }
  | { kind: "error"; code: string; message: string; details: EndStreamErrorDetail[] };

export interface EndStreamErrorDetail {
  readonly type: string;
  /** Decoded base64 value (padded or unpadded accepted). */
  readonly value: Uint8Array;
}

export function parseEndStream(payload: Uint8Array): EndStreamOutcome {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch (cause) {
    throw new EnvelopeFormatError(`EndStream payload is not JSON: ${(cause as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new EnvelopeFormatError("EndStream payload is not a JSON object");
  const error = (json as { error?: unknown }).error;
  if (error === undefined || error === null) return { kind: "ok", metadata: json as Record<string, unknown> };
  if (typeof error !== "object") throw new EnvelopeFormatError("EndStream error is not an object");
  const e = error as { code?: unknown; message?: unknown; details?: unknown };
  if (typeof e.code !== "string") throw new EnvelopeFormatError("EndStream error has no code");
  const details: EndStreamErrorDetail[] = [];
  if (Array.isArray(e.details)) {
    for (const d of e.details as Array<{ type?: unknown; value?: unknown }>) {
      if (typeof d.type === "string" && typeof d.value === "string") details.push({ type: d.type, value: decodeBase64Lenient(d.value) });
    }
  }
  return { kind: "error", code: e.code, message: typeof e.message === "string" ? e.message : "", details };
}

/** Standard base64, with or without padding. */
export function decodeBase64Lenient(text: string): Uint8Array {
  const padded = text + "=".repeat((4 - (text.length % 4)) % 4);
  return new Uint8Array(Buffer.from(padded, "base64"));
}
