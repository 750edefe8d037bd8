/**
 * Reading a request straight off node's IncomingMessage for the paths that
 * skip connect-node (bidi-append-direct.ts, run-sse-direct.ts): the whole
 * body within connect-node's readMaxBytes, and the headers as the
 * `RequestHeaders` view the handlers read.
 */
import type { IncomingMessage } from "node:http";
import { gunzip } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import type { RequestHeaders } from "./request-identity.ts";

/** The whole body (gunzipped when `gzip`); over `maxBytes` the rest is read and dropped, then resource_exhausted. */
export async function readBody(req: IncomingMessage, maxBytes: number, gzip: boolean): Promise<Uint8Array> {
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
export function nodeHeaders(req: IncomingMessage): RequestHeaders {
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
