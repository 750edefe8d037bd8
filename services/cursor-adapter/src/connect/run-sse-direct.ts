/**
 * `POST /agent.v1.AgentService/RunSSE` as Cursor sends it (Connect server
 * stream, `application/connect+proto`, an uncompressed request envelope, gzip
 * or nothing accepted for the answer) written straight on the node response:
 * each frame is encoded and enveloped, and the frames of one pass of the event
 * loop are written together (loop-batched-writes.ts), without connect-node's
 * per-frame pipeline of async iterables (serialize, compress, envelope, join)
 * and its per-request web Headers, URL and abort controllers.
 *
 * Same frames (run-sse-handler.ts `runSseFrames`), same wire answer as the
 * connect route: HTTP 200, `content-type: application/connect+proto`,
 * `connect-content-encoding: gzip` when the client accepts it (then an
 * envelope of at least 1 KiB is gzipped, flag 0x01, as connect-node's
 * compressMinBytes), and one EndStream envelope (flag 0x02, connect's JSON).
 * One difference: checkpoint frames go uncompressed (flag 0x00; Connect lets
 * each envelope say whether it is compressed). A checkpoint is mostly the
 * SHA-256 ids of its roots, which gzip cannot shrink: 1,000 roots are 34,000
 * bytes, 33,659 gzipped, at 0.56 ms each, and a turn sends four checkpoints.
 * Anything else (another content type or compression, a compressed request,
 * a connect-timeout-ms, another protocol version) is left to connect-node:
 * `serve` returns false without touching the request.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createEndStreamSerialization, endStreamFlag } from "@connectrpc/connect/protocol-connect";
import { agent } from "@byok/cursor-protocol";
import { LoopBatchedWrites } from "./loop-batched-writes.ts";
import { nodeHeaders, readBody } from "./node-request.ts";
import { runSseFrames, type RunSseDeps } from "./run-sse-handler.ts";

export const RUN_SSE_PATH = `/${agent.AgentService.typeName}/${agent.AgentService.method.runSSE.name}`;

/** connect-node's default compressMinBytes: smaller envelopes go uncompressed. */
export const COMPRESS_MIN_BYTES = 1024;
const COMPRESSED_FLAG = 0x01;

export interface DirectRunSseOptions extends RunSseDeps {
  /** The largest request body accepted (connect-node's readMaxBytes). */
  readMaxBytes: number;
}

/** Serves the request and returns true when it is a RunSSE this path takes; false leaves it untouched. */
export type DirectRunSse = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createDirectRunSse(options: DirectRunSseOptions): DirectRunSse {
  return (req, res) => {
    const gzip = responseGzip(req);
    if (gzip === undefined) return false;
    void serve(req, res, options, gzip);
    return true;
  };
}

/** Whether the answer is gzipped; undefined when this path does not take the request. */
function responseGzip(req: IncomingMessage): boolean | undefined {
  if (req.method !== "POST" || req.url !== RUN_SSE_PATH) return undefined;
  const h = req.headers;
  if (h["content-type"] !== "application/connect+proto") return undefined;
  const encoding = h["connect-content-encoding"];
  if (encoding !== undefined && encoding !== "identity") return undefined;
  const version = h["connect-protocol-version"];
  if (version !== undefined && version !== "1") return undefined;
  if (h["connect-timeout-ms"] !== undefined) return undefined;
  // connect-node answers with the first accepted encoding it has (gzip, br).
  const header = h["connect-accept-encoding"];
  const accepted = Array.isArray(header) ? header.join(",") : header;
  if (accepted === undefined || accepted === "") return false;
  for (const name of accepted.split(",")) {
    const trimmed = name.trim();
    if (trimmed === "gzip") return true;
    if (trimmed === "br") return undefined;
  }
  return false;
}

const endStream = createEndStreamSerialization({});

async function serve(req: IncomingMessage, res: ServerResponse, options: DirectRunSseOptions, gzip: boolean): Promise<void> {
  const abort = new AbortController();
  // The client went away before the EndStream (a finished response closes too: nothing to abort then).
  res.once("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  const header: Record<string, string> = { "content-type": "application/connect+proto" };
  if (gzip) header["connect-content-encoding"] = "gzip";
  // The frames of one pass of the event loop (e.g. the KV GETs a burst of answers starts) go out in one write.
  const writes = new LoopBatchedWrites((chunk) => {
    if (res.destroyed || res.writableEnded) return;
    if (!res.headersSent) res.writeHead(200, header);
    res.write(chunk);
  });
  const enqueue = (flags: number, data: Uint8Array, compressible: boolean): void => writes.push(envelope(flags, data, gzip && compressible));
  let error: ConnectError | undefined;
  try {
    const requestId = parseRequest(await readBody(req, options.readMaxBytes, false));
    const frames = runSseFrames(options, {
      requestId,
      requestHeaders: nodeHeaders(req),
      signal: abort.signal,
      onAttached: () => void (header["cache-control"] = "no-cache"),
    });
    for await (const frame of frames) {
      if (res.destroyed) continue;
      enqueue(0, toBinary(agent.AgentServerMessageSchema, frame), frame.message.case !== "conversationCheckpointUpdate");
      if (res.writableNeedDrain) await drained(res);
    }
  } catch (cause) {
    error = cause instanceof ConnectError ? cause : new ConnectError("internal error", Code.Internal, undefined, undefined, cause);
  }
  if (res.destroyed || res.writableEnded) return;
  enqueue(endStreamFlag, endStream.serialize({ metadata: new Headers(), error }), true);
  writes.flush();
  res.end();
}

/** The one request envelope (uncompressed: this path takes no request compression) as its BidiRequestId's request id. */
function parseRequest(body: Uint8Array): string {
  if (body.length < 5) throw new ConnectError("protocol error: missing input message for server-streaming method", Code.InvalidArgument);
  const flags = body[0]!;
  const length = Buffer.from(body.buffer, body.byteOffset, body.byteLength).readUInt32BE(1);
  if (flags !== 0) throw new ConnectError(`protocol error: unexpected envelope flags ${flags}`, Code.InvalidArgument);
  if (body.length !== 5 + length) throw new ConnectError("protocol error: the request body is not one message", Code.InvalidArgument);
  try {
    return fromBinary(agent.BidiRequestIdSchema, body.subarray(5)).requestId;
  } catch (cause) {
    // connect-node reports an undecodable request message as internal too.
    throw new ConnectError(`parse binary: ${(cause as Error).message}`, Code.Internal);
  }
}

/** flags, big-endian length, data; gzipped (and flagged) from COMPRESS_MIN_BYTES on when the answer is gzip. */
function envelope(flags: number, data: Uint8Array, gzip: boolean): Buffer {
  let payload = data;
  let envelopeFlags = flags;
  if (gzip && data.byteLength >= COMPRESS_MIN_BYTES) {
    payload = gzipSync(data);
    envelopeFlags |= COMPRESSED_FLAG;
  }
  const out = Buffer.allocUnsafe(5 + payload.byteLength);
  out[0] = envelopeFlags;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
