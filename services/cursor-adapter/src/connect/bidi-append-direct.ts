/**
 * `POST /aiserver.v1.BidiService/BidiAppend` as Cursor sends it (Connect
 * unary, `application/proto`, identity or gzip body) answered straight on the
 * node request, without connect-node's per-request machinery (web Headers and
 * URL objects, abort controllers, async-iterable pipelines). A turn makes one
 * BidiAppend per KV answer (7 on a plain text turn, one per missing blob on a
 * cold checkpoint), so that machinery was most of the adapter's CPU per turn.
 *
 * Same handler as the connect route (bidi-append-handler.ts), same wire
 * answers: 200 with the encoded BidiAppendResponse, or the Connect unary error
 * (HTTP status of the code, JSON body). Anything else (JSON, another
 * compression, a connect-timeout-ms, another protocol version) is left to
 * connect-node: `serve` returns false without touching the request.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { gunzip } from "node:zlib";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { aiserver } from "@byok/cursor-protocol";
import type { AppendHandler } from "./bidi-append-handler.ts";
import type { RequestHeaders } from "./request-identity.ts";

export const BIDI_APPEND_PATH = `/${aiserver.BidiService.typeName}/${aiserver.BidiService.method.bidiAppend.name}`;

export interface DirectAppendOptions {
  append: AppendHandler;
  /** The largest body accepted, after decompression (connect-node's readMaxBytes). */
  readMaxBytes: number;
}

/** Answers the request and returns true when it is a BidiAppend this path takes; false leaves it untouched. */
export type DirectAppend = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createDirectAppend(options: DirectAppendOptions): DirectAppend {
  return (req, res) => {
    if (!takes(req)) return false;
    void answer(req, res, options);
    return true;
  };
}

function takes(req: IncomingMessage): boolean {
  if (req.method !== "POST" || req.url !== BIDI_APPEND_PATH) return false;
  const h = req.headers;
  if (h["content-type"] !== "application/proto") return false;
  const encoding = h["content-encoding"];
  if (encoding !== undefined && encoding !== "gzip" && encoding !== "identity") return false;
  const version = h["connect-protocol-version"];
  if (version !== undefined && version !== "1") return false;
  return h["connect-timeout-ms"] === undefined;
}

async function answer(req: IncomingMessage, res: ServerResponse, options: DirectAppendOptions): Promise<void> {
  try {
    const body = await readBody(req, options.readMaxBytes, req.headers["content-encoding"] === "gzip");
    let request: aiserver.BidiAppendRequest;
    try {
      request = fromBinary(aiserver.BidiAppendRequestSchema, body);
    } catch (cause) {
      // connect-node reports an undecodable request body as internal too.
      throw new ConnectError(`parse binary: ${(cause as Error).message}`, Code.Internal);
    }
    const response = await options.append(request, nodeHeaders(req));
    const bytes = toBinary(aiserver.BidiAppendResponseSchema, create(aiserver.BidiAppendResponseSchema, response));
    res.writeHead(200, { "content-type": "application/proto", "content-length": bytes.length });
    res.end(bytes);
  } catch (error) {
    const connectErr = ConnectError.from(error);
    const bytes = errorToJsonBytes(connectErr, {});
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(codeToHttpStatus(connectErr.code), { "content-type": "application/json", "content-length": bytes.length });
    res.end(bytes);
  }
}

/** The whole body (gunzipped when `gzip`); over `maxBytes` the rest is read and dropped, then resource_exhausted. */
async function readBody(req: IncomingMessage, maxBytes: number, gzip: boolean): Promise<Uint8Array> {
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.once("end", () => {
      if (size > maxBytes) reject(tooLarge(maxBytes));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
    req.once("error", (err) => reject(new ConnectError(`reading the request: ${err.message}`, Code.Canceled)));
  });
  if (!gzip) return raw;
  return new Promise<Uint8Array>((resolve, reject) => {
    gunzip(raw, { maxOutputLength: maxBytes }, (err, out) => {
      if (err === null) return resolve(out);
      if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") return reject(tooLarge(maxBytes));
      reject(new ConnectError(`decompress gzip: ${err.message}`, Code.InvalidArgument));
    });
  });
}

function tooLarge(maxBytes: number): ConnectError {
  return new ConnectError(`message size is larger than configured readMaxBytes ${maxBytes}`, Code.ResourceExhausted);
}

/** The request's headers as `RequestHeaders` (names are lower case in node; repeated values joined as fetch does). */
function nodeHeaders(req: IncomingMessage): RequestHeaders {
  const headers = req.headers;
  const valueOf = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(", ") : value);
  return {
    get: (name) => valueOf(headers[name.toLowerCase()]) ?? null,
    forEach: (callback) => {
      for (const [name, value] of Object.entries(headers)) {
        const text = valueOf(value);
        if (text !== undefined) callback(text, name, undefined as unknown as Headers);
      }
    },
  };
}
