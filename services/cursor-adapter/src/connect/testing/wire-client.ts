/**
 * Test-only Cursor wire client: raw HTTP for RunSSE (incremental Connect
 * envelope parsing, raw bytes kept for byte-level assertions) and unary calls.
 * Deliberately independent of connect-es so the tests check our bytes, not the
 * library's round trip.
 */
import { gzipSync } from "node:zlib";
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";

export const FLAG_COMPRESSED = 0x01;
export const FLAG_END_STREAM = 0x02;

export interface Envelope {
  flags: number;
  payload: Uint8Array;
  /** Header + payload exactly as received. */
  raw: Uint8Array;
}

export function envelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length, false);
  out.set(payload, 5);
  return out;
}

/** Splits a byte stream into envelopes; chunks may cut envelopes anywhere. */
export class EnvelopeReader {
  private buffer = new Uint8Array(0);

  push(chunk: Uint8Array): Envelope[] {
    const joined = new Uint8Array(this.buffer.length + chunk.length);
    joined.set(this.buffer);
    joined.set(chunk, this.buffer.length);
    this.buffer = joined;
    const out: Envelope[] = [];
    while (this.buffer.length >= 5) {
      const length = new DataView(this.buffer.buffer, this.buffer.byteOffset).getUint32(1, false);
      if (this.buffer.length < 5 + length) break;
      const raw = this.buffer.slice(0, 5 + length);
      out.push({ flags: raw[0] ?? 0, payload: raw.slice(5), raw });
      this.buffer = this.buffer.slice(5 + length);
    }
    return out;
  }

  get pendingBytes(): number {
    return this.buffer.length;
  }
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

export function decodeServerMessage(frame: Envelope): agent.AgentServerMessage {
  if (frame.flags !== 0) throw new Error(`frame flags ${frame.flags} is not a plain message`);
  return fromBinary(agent.AgentServerMessageSchema, frame.payload);
}

export function isHeartbeat(message: agent.AgentServerMessage): boolean {
  return message.message.case === "interactionUpdate" && message.message.value.message.case === "heartbeat";
}

export interface RunSseOptions {
  headers?: Record<string, string>;
  /** Body to send instead of the envelope around BidiRequestId{requestId}. */
  rawBody?: Uint8Array;
}

/** One open RunSSE response, read frame by frame. */
export class RunSseConnection {
  readonly status: number;
  readonly contentType: string | null;
  readonly headers: Headers;
  /** Every byte of the response body received so far. */
  readonly received: number[] = [];
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly parser = new EnvelopeReader();
  private readonly ready: Envelope[] = [];
  private readonly abort: AbortController;
  private finished = false;

  constructor(response: Response, abort: AbortController) {
    this.status = response.status;
    this.contentType = response.headers.get("content-type");
    this.headers = response.headers;
    if (!response.body) throw new Error("RunSSE response has no body");
    this.reader = response.body.getReader();
    this.abort = abort;
  }

  /** The next envelope; throws when the body ends first. */
  async next(): Promise<Envelope> {
    for (;;) {
      const frame = this.ready.shift();
      if (frame) return frame;
      if (this.finished) throw new Error("RunSSE body ended");
      const { value, done } = await this.reader.read();
      if (done) {
        this.finished = true;
        continue;
      }
      this.received.push(...value);
      this.ready.push(...this.parser.push(value));
    }
  }

  /** Next frame that is not a heartbeat. */
  async nextNonHeartbeat(): Promise<Envelope> {
    for (;;) {
      const frame = await this.next();
      if (frame.flags !== 0 || !isHeartbeat(decodeServerMessage(frame))) return frame;
    }
  }

  /** Frames up to and including the EndStream. */
  async readToEnd(): Promise<Envelope[]> {
    const frames: Envelope[] = [];
    for (;;) {
      const frame = await this.next();
      frames.push(frame);
      if (frame.flags & FLAG_END_STREAM) return frames;
    }
  }

  /** Resolves true once the body has ended (after the EndStream, nothing else may come). */
  async bodyEnded(): Promise<boolean> {
    if (this.ready.length > 0) return false;
    const { value, done } = await this.reader.read();
    if (done) return true;
    this.received.push(...value);
    this.ready.push(...this.parser.push(value));
    return false;
  }

  /** Drop the connection (a client going away). */
  disconnect(): void {
    this.abort.abort();
    this.reader.cancel().catch(() => {});
  }
}

export async function openRunSse(baseUrl: string, requestId: string, options: RunSseOptions = {}): Promise<RunSseConnection> {
  const body = options.rawBody ?? envelope(0, toBinary(agent.BidiRequestIdSchema, create(agent.BidiRequestIdSchema, { requestId })));
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/agent.v1.AgentService/RunSSE`, {
    method: "POST",
    headers: { "content-type": "application/connect+proto", "connect-protocol-version": "1", ...options.headers },
    body,
    signal: abort.signal,
  });
  return new RunSseConnection(response, abort);
}

export interface UnaryResult {
  status: number;
  contentType: string | null;
  body: Uint8Array;
}

export interface UnaryOptions {
  headers?: Record<string, string>;
  gzip?: boolean;
}

export async function postUnary(baseUrl: string, path: string, body: Uint8Array, options: UnaryOptions = {}): Promise<UnaryResult> {
  const headers: Record<string, string> = { "content-type": "application/proto", "connect-protocol-version": "1", ...options.headers };
  let payload = body;
  if (options.gzip) {
    payload = gzipSync(body);
    headers["content-encoding"] = "gzip";
  }
  const response = await fetch(`${baseUrl}${path}`, { method: "POST", headers, body: payload });
  return { status: response.status, contentType: response.headers.get("content-type"), body: new Uint8Array(await response.arrayBuffer()) };
}

/** A unary call with protobuf in and out; throws with the Connect error JSON on a non-200 answer. */
export async function callUnary<I extends DescMessage, O extends DescMessage>(
  baseUrl: string,
  path: string,
  input: I,
  request: MessageInitShape<I>,
  output: O,
): Promise<MessageShape<O>> {
  const result = await postUnary(baseUrl, path, toBinary(input, create(input, request)));
  if (result.status !== 200) throw new Error(`${path}: HTTP ${result.status} ${Buffer.from(result.body).toString("utf8")}`);
  return fromBinary(output, result.body);
}

export interface AppendOptions extends UnaryOptions {
  /** Send this string as `data` instead of the hex of `message`. */
  rawData?: string;
}

export function bidiAppendBody(requestId: string, seqno: number, message: agent.AgentClientMessage | undefined, rawData?: string): Uint8Array {
  const data = rawData ?? (message ? hex(toBinary(agent.AgentClientMessageSchema, message)) : "");
  return toBinary(
    aiserver.BidiAppendRequestSchema,
    create(aiserver.BidiAppendRequestSchema, { requestId: requestId === "" ? undefined : { requestId }, appendSeqno: BigInt(seqno), data }),
  );
}

export async function bidiAppend(
  baseUrl: string,
  requestId: string,
  seqno: number,
  message: agent.AgentClientMessage | undefined,
  options: AppendOptions = {},
): Promise<UnaryResult> {
  return postUnary(baseUrl, "/aiserver.v1.BidiService/BidiAppend", bidiAppendBody(requestId, seqno, message, options.rawData), options);
}

/** Connect unary error body: {"code", "message"}. */
export function unaryError(result: UnaryResult): { code: string; message?: string } {
  return JSON.parse(Buffer.from(result.body).toString("utf8")) as { code: string; message?: string };
}
