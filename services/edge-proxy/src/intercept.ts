/**
 * TLS termination for intercepted Cursor hosts. The CONNECT socket is wrapped
 * in a server-side TLS socket presenting a team-CA leaf for the requested host
 * (ALPN http/1.1 only, so clients never try HTTP/2 here) and handed to an
 * internal HTTP/1.1 server that is never bound to a port. Each request is then
 * dispatched by level-1 routing, carrying the member of its tunnel.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { TLSSocket } from "node:tls";
import type { Duplex } from "node:stream";
import type { IssuedLeaf, LeafCertificates } from "./leaf-certs.ts";
import type { InterceptDeps, TunnelInfo } from "./proxy-context.ts";
import { classifyRequest } from "./routing.ts";
import { handleBidiAppend, handleRunSse } from "./agent-requests.ts";
import { answerModelList } from "./model-list-merge.ts";
import { answerServerConfig } from "./server-config.ts";
import { forwardStreaming, forwardUpgrade, sendProxyError } from "./upstream.ts";

export class Interceptor {
  readonly #deps: InterceptDeps;
  readonly #leafs: LeafCertificates;
  readonly #server: http.Server;
  readonly #tunnels = new WeakMap<object, TunnelInfo>();
  readonly #sockets = new Set<TLSSocket>();

  constructor(deps: InterceptDeps, leafs: LeafCertificates) {
    this.#deps = deps;
    this.#leafs = leafs;
    this.#server = http.createServer({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 30_000 }, (req, res) => this.#onRequest(req, res));
    this.#server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#onUpgrade(req, socket, head));
    this.#server.on("clientError", (err, socket) => {
      deps.log.debug({ err: err.message }, "bad request on intercepted connection");
      socket.destroy();
    });
  }

  /** Answers the CONNECT with 200 and terminates TLS on `socket` for `tunnel.host`. */
  async intercept(socket: Duplex, head: Buffer, tunnel: TunnelInfo): Promise<void> {
    let leaf: IssuedLeaf;
    try {
      leaf = await this.#leafs.forHost(tunnel.host);
    } catch (err) {
      this.#deps.log.error({ err, host: tunnel.host }, "cannot issue a leaf certificate");
      socket.end("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      return;
    }
    if (socket.destroyed) return;
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) socket.unshift(head);
    const tlsSocket = new TLSSocket(socket, { isServer: true, secureContext: leaf.context, ALPNProtocols: ["http/1.1"] });
    this.#tunnels.set(tlsSocket, tunnel);
    this.#sockets.add(tlsSocket);
    tlsSocket.on("close", () => this.#sockets.delete(tlsSocket));
    tlsSocket.on("error", (err) => {
      this.#deps.log.debug({ err: err.message, host: tunnel.host }, "intercepted TLS connection failed");
      tlsSocket.destroy();
      socket.destroy();
    });
    this.#server.emit("connection", tlsSocket);
  }

  /** Drops every intercepted connection. */
  close(): void {
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    this.#server.close();
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const tunnel = this.#tunnels.get(req.socket);
    if (!tunnel) {
      sendProxyError(res, 500, "internal", "request on an unknown connection");
      return;
    }
    const log = this.#deps.log;
    const started = Date.now();
    res.on("finish", () => log.debug({ method: req.method, host: tunnel.host, path: req.url, status: res.statusCode, ms: Date.now() - started, member_id: tunnel.memberId }, "intercepted request"));
    this.#dispatch(req, res, tunnel).catch((err: unknown) => {
      log.error({ err, path: req.url }, "intercepted request failed");
      sendProxyError(res, 500, "internal", "edge proxy error");
    });
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse, tunnel: TunnelInfo): Promise<void> {
    const deps = this.#deps;
    const route = classifyRequest(req.method, req.url);
    switch (route.kind) {
      case "run_sse":
        return handleRunSse(req, res, tunnel, deps);
      case "bidi_append":
        return handleBidiAppend(req, res, tunnel, deps);
      case "model_list":
        deps.metrics.request("byok");
        return answerModelList(req, res, route, tunnel, deps);
      case "server_config":
        deps.metrics.request("byok");
        return answerServerConfig(req, res, tunnel, deps);
      case "upstream":
        deps.metrics.request("passthrough");
        forwardStreaming(req, res, deps.upstreamFor(tunnel), { connectTimeoutMs: deps.connectTimeoutMs, log: deps.log });
        return;
      default: {
        const never: never = route;
        throw new Error(`unknown route ${JSON.stringify(never)}`);
      }
    }
  }

  #onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const tunnel = this.#tunnels.get(req.socket);
    if (!tunnel) {
      socket.destroy();
      return;
    }
    this.#deps.metrics.request("passthrough");
    forwardUpgrade(req, socket, head, this.#deps.upstreamFor(tunnel), { connectTimeoutMs: this.#deps.connectTimeoutMs, log: this.#deps.log });
  }
}
