/**
 * HTTP forwarding from an intercepted request to an origin (Cursor upstream or
 * the cursor adapter): method, path, query, headers and body go out unchanged
 * except hop-by-hop headers, proxy credentials, client-sent x-byok-* headers and
 * Host; status, headers, body and trailers come back unchanged, streamed chunk
 * by chunk. Failures become plain HTTP errors (502/504 with a JSON body), never
 * Cursor content.
 */
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "@byok/platform";

/** Where a request goes: an origin URL and the connection pool for it. */
export interface Origin {
  readonly url: URL;
  readonly agent: http.Agent;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "host",
]);

export const MEMBER_HEADER = "x-byok-member-id";
const INTERNAL_PREFIX = "x-byok-";

function connectionTokens(rawHeaders: readonly string[]): Set<string> {
  const tokens = new Set<string>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] ?? "").toLowerCase() === "connection") {
      for (const t of (rawHeaders[i + 1] ?? "").split(",")) tokens.add(t.trim().toLowerCase());
    }
  }
  tokens.delete("close");
  tokens.delete("keep-alive");
  tokens.delete("upgrade");
  return tokens;
}

/**
 * Raw header list (name, value, name, value …) to send on, in the original
 * order and spelling, without hop-by-hop headers, Host, and client-sent
 * x-byok-* headers; `set` replaces or adds headers (lower-case names); `keep`
 * exempts hop-by-hop names (for upgrades).
 */
export function forwardHeaders(rawHeaders: readonly string[], set: Readonly<Record<string, string>> = {}, keep: ReadonlySet<string> = new Set()): string[] {
  return filterHeaders(rawHeaders, (lower) => keep.has(lower) || !lower.startsWith(INTERNAL_PREFIX), set, keep);
}

/** Response headers to relay: everything but hop-by-hop headers. */
export function relayResponseHeaders(rawHeaders: readonly string[], set: Readonly<Record<string, string>> = {}): string[] {
  return filterHeaders(rawHeaders, () => true, set, new Set());
}

function filterHeaders(
  rawHeaders: readonly string[],
  allow: (lowerName: string) => boolean,
  set: Readonly<Record<string, string>>,
  keep: ReadonlySet<string>,
): string[] {
  const extraHopByHop = connectionTokens(rawHeaders);
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? "";
    const lower = name.toLowerCase();
    if (Object.hasOwn(set, lower)) continue;
    const hopByHop = HOP_BY_HOP.has(lower) || extraHopByHop.has(lower);
    if ((hopByHop && !keep.has(lower)) || !allow(lower)) continue;
    out.push(name, rawHeaders[i + 1] ?? "");
  }
  for (const [name, value] of Object.entries(set)) out.push(name, value);
  return out;
}

/** A plain HTTP error from the proxy itself (JSON body in the Connect error shape). */
export function sendProxyError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ code, message });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "x-byok-proxy-error": code });
  res.end(body);
}

export interface ForwardOptions {
  /** Headers to set on the forwarded request (e.g. the member id for the adapter). */
  set?: Readonly<Record<string, string>>;
  /** The request body, already read (sent instead of piping `req`). */
  body?: Buffer;
  connectTimeoutMs: number;
  log: Logger;
}

function requestOptions(req: IncomingMessage, origin: Origin, headers: string[]): http.RequestOptions {
  const hostname = origin.url.hostname.replace(/^\[|\]$/g, "");
  return {
    protocol: origin.url.protocol,
    hostname,
    port: origin.url.port || (origin.url.protocol === "https:" ? 443 : 80),
    method: req.method ?? "GET",
    path: req.url ?? "/",
    headers: headers as unknown as OutgoingHttpHeaders,
    agent: origin.agent,
    // SNI carries names only (RFC 6066).
    ...(isIP(hostname) === 0 ? { servername: hostname } : {}),
  } as http.RequestOptions;
}

function requestFn(origin: Origin): typeof http.request {
  return origin.url.protocol === "https:" ? https.request : http.request;
}

/** Fails a request whose TCP connection is not up within `ms` (a reused socket is already up). */
function armConnectTimeout(outgoing: http.ClientRequest, ms: number): void {
  outgoing.once("socket", (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(() => outgoing.destroy(new Error(`connect timeout after ${ms} ms`)), ms);
    socket.once("connect", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
  });
}

function withBody(headers: string[], body: Buffer | undefined): string[] {
  if (body === undefined) return headers;
  const out: string[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) {
    if ((headers[i] ?? "").toLowerCase() !== "content-length") out.push(headers[i] ?? "", headers[i + 1] ?? "");
  }
  out.push("content-length", String(body.length));
  return out;
}

/** Streams `req` to `origin` and the answer back to `res`, without buffering. */
export function forwardStreaming(req: IncomingMessage, res: ServerResponse, origin: Origin, options: ForwardOptions): void {
  const headers = withBody(forwardHeaders(req.rawHeaders, { host: origin.url.host, ...options.set }), options.body);
  const outgoing = requestFn(origin)(requestOptions(req, origin, headers));
  armConnectTimeout(outgoing, options.connectTimeoutMs);
  const log = options.log;

  outgoing.on("response", (incoming) => {
    res.sendDate = false; // relay the origin's Date (or none), do not add one
    res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, relayResponseHeaders(incoming.rawHeaders) as unknown as OutgoingHttpHeaders);
    // The head goes out with the first body bytes or the end when they come in the same
    // event-loop turn (a unary answer usually arrives whole: one TLS record and one socket
    // write instead of three); otherwise alone, before anything waits on the origin.
    let relayed = false;
    setImmediate(() => {
      if (!relayed && !res.destroyed && !res.writableEnded) res.flushHeaders();
    });
    incoming.on("data", (chunk: Buffer) => {
      relayed = true;
      if (!res.write(chunk)) {
        incoming.pause();
        res.once("drain", () => incoming.resume());
      }
    });
    incoming.on("end", () => {
      if (incoming.rawTrailers.length > 0) res.addTrailers(pairs(incoming.rawTrailers));
      res.end();
    });
    incoming.on("error", (err) => {
      log.warn({ err: err.message, origin: origin.url.host }, "origin response broke off");
      res.destroy(); // the client sees a truncated response, not a clean end
    });
    incoming.on("aborted", () => res.destroy());
  });
  outgoing.on("error", (err) => {
    log.warn({ err: err.message, origin: origin.url.host, path: req.url }, "origin request failed");
    if (!res.headersSent) sendProxyError(res, 502, "unavailable", `origin ${origin.url.host} failed: ${err.message}`);
    else res.destroy();
  });
  res.on("close", () => {
    if (!res.writableFinished) outgoing.destroy();
  });

  if (options.body !== undefined) outgoing.end(options.body);
  else req.pipe(outgoing);
}

function pairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i] ?? "", raw[i + 1] ?? ""]);
  return out;
}

export type BufferedResponse =
  | { kind: "response"; status: number; statusMessage: string; rawHeaders: string[]; body: Buffer }
  | { kind: "failed"; message: string };

export interface FetchOptions {
  body: Buffer;
  set?: Readonly<Record<string, string>>;
  timeoutMs: number;
  connectTimeoutMs: number;
  maxBytes: number;
}

/** Sends a request with a known body and reads the whole answer (for small unary calls). */
export function fetchBuffered(req: IncomingMessage, origin: Origin, options: FetchOptions): Promise<BufferedResponse> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: BufferedResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const headers = withBody(forwardHeaders(req.rawHeaders, { host: origin.url.host, ...options.set }), options.body);
    const outgoing = requestFn(origin)(requestOptions(req, origin, headers));
    armConnectTimeout(outgoing, options.connectTimeoutMs);
    const timer = setTimeout(() => {
      outgoing.destroy();
      finish({ kind: "failed", message: `no complete answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    outgoing.on("error", (err) => finish({ kind: "failed", message: err.message }));
    outgoing.on("response", (incoming) => {
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          outgoing.destroy();
          finish({ kind: "failed", message: `answer larger than ${options.maxBytes} bytes` });
          return;
        }
        chunks.push(chunk);
      });
      incoming.on("end", () =>
        finish({ kind: "response", status: incoming.statusCode ?? 0, statusMessage: incoming.statusMessage ?? "", rawHeaders: incoming.rawHeaders, body: Buffer.concat(chunks, size) }),
      );
      incoming.on("error", (err) => finish({ kind: "failed", message: err.message }));
      incoming.on("aborted", () => finish({ kind: "failed", message: "answer broke off" }));
    });
    outgoing.end(options.body);
  });
}

/** Relays an HTTP upgrade (e.g. WebSocket) to `origin` and splices the two sockets. */
export function forwardUpgrade(req: IncomingMessage, clientSocket: Duplex, head: Buffer, origin: Origin, options: ForwardOptions): void {
  const keep = new Set(["connection", "upgrade"]);
  const headers = forwardHeaders(req.rawHeaders, { host: origin.url.host, ...options.set }, keep);
  const outgoing = requestFn(origin)(requestOptions(req, origin, headers));
  armConnectTimeout(outgoing, options.connectTimeoutMs);
  const writeHead = (status: number, message: string, raw: readonly string[]): void => {
    const lines = [`HTTP/1.1 ${status} ${message}`];
    for (const [name, value] of pairs(raw)) lines.push(`${name}: ${value}`);
    clientSocket.write(`${lines.join("\r\n")}\r\n\r\n`);
  };
  outgoing.on("upgrade", (incoming, originSocket, originHead) => {
    writeHead(incoming.statusCode ?? 101, incoming.statusMessage ?? "Switching Protocols", incoming.rawHeaders);
    if (originHead.length > 0) clientSocket.write(originHead);
    if (head.length > 0) originSocket.write(head);
    originSocket.pipe(clientSocket).pipe(originSocket);
    originSocket.on("error", () => clientSocket.destroy());
    clientSocket.on("error", () => originSocket.destroy());
    clientSocket.on("close", () => originSocket.destroy());
    originSocket.on("close", () => clientSocket.destroy());
  });
  outgoing.on("response", (incoming) => {
    const raw = relayResponseHeaders(incoming.rawHeaders, { connection: "close" });
    writeHead(incoming.statusCode ?? 502, incoming.statusMessage ?? "", raw);
    incoming.pipe(clientSocket);
  });
  outgoing.on("error", (err) => {
    options.log.warn({ err: err.message, origin: origin.url.host }, "upgrade request failed");
    clientSocket.end("HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
  });
  outgoing.end();
}
