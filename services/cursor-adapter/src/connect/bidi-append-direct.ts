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
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { aiserver } from "@byok/cursor-protocol";
import type { AppendHandler } from "./bidi-append-handler.ts";
import { nodeHeaders, readBody } from "./node-request.ts";

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
