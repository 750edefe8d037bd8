/**
 * The bridge listener: HTTPS (the team's certificate) or, on a loopback
 * address only, plain HTTP; WebSocket upgrades on /acp. The upgrade request
 * must carry the member key (`Authorization: Bearer <key>`), verified through
 * the store before anything else happens: an unknown or revoked key is
 * answered 401, a store that does not answer 503 (the bridge tries again). A
 * request naming a link of the same member resumes it; any other starts a new
 * link, which `onNewLink` connects to an ACP agent. GET /healthz answers 200.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Duplex } from "node:stream";
import { randomBytes } from "node:crypto";
import { WebSocketServer } from "ws";
import type { MemberId } from "@byok/contracts";
import { listen, urlHost, type Logger } from "@byok/platform";
import { LINK_HEADERS, parseReceivedHeader } from "@byok/resumable-link";
import type { MemberKeyLookup } from "@byok/store-client";
import type { TlsFiles } from "../config.ts";
import type { AcpAdapterMetrics } from "../metrics.ts";
import { ServerLink } from "./server-link.ts";

export const LINK_PATH = "/acp";

export interface LinkServerOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: TlsFiles | undefined;
  readonly resumeMs: number;
  readonly pingMs: number;
  verifyKey(key: string): Promise<MemberKeyLookup>;
  /** A new link of an authenticated member (not called for a resumed one). */
  onNewLink(link: ServerLink): void;
  readonly metrics: AcpAdapterMetrics;
  readonly log: Logger;
}

export interface LinkServer {
  /** wss://host:port or ws://host:port */
  readonly url: string;
  readonly port: number;
  /** Links alive now (connected or waiting for a resume). */
  links(): readonly ServerLink[];
  /** Drops every socket without ending the links (tests: a network cut). */
  dropSockets(): void;
  stop(): Promise<void>;
}

/** A link id: 128 random bits, base64url. */
function newLinkId(): string {
  return randomBytes(16).toString("base64url");
}

export async function startLinkServer(options: LinkServerOptions): Promise<LinkServer> {
  const { log } = options;
  const links = new Map<string, ServerLink>();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });

  const server: Server =
    options.tls === undefined
      ? createHttpServer()
      : createHttpsServer({ cert: options.tls.certPem, key: options.tls.keyPem, minVersion: "TLSv1.2" });
  server.on("request", (req, res) => {
    if (req.method === "GET" && req.url === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found: the ACP bridge connects with a WebSocket upgrade on /acp\n");
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void accept(req, socket, head).catch((error: unknown) => {
      log.error({ err: error }, "bridge upgrade failed");
      refuse(socket, 500, "internal error");
    });
  });

  async function accept(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const path = new URL(req.url ?? "/", "http://gateway").pathname;
    if (path !== LINK_PATH) return refuse(socket, 404, `not found: the ACP bridge link is on ${LINK_PATH}`);
    const key = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    if (key === undefined) return refuse(socket, 401, "missing member key (Authorization: Bearer <key>)");
    const lookup = await options.verifyKey(key);
    switch (lookup.kind) {
      case "unknown":
        log.info("bridge refused: unknown or revoked member key");
        options.metrics.linkEvent("refused_key");
        return refuse(socket, 401, "unknown or revoked member key");
      case "unavailable":
        log.warn({ reason: lookup.message }, "bridge refused: member keys cannot be checked now");
        options.metrics.linkEvent("refused_unavailable");
        return refuse(socket, 503, "the gateway cannot check member keys right now; the bridge will try again");
      case "member":
        break;
      default: {
        const unreachable: never = lookup;
        throw new Error(`unknown member lookup ${JSON.stringify(unreachable)}`);
      }
    }
    const memberId = lookup.memberId;
    const requested = header(req, LINK_HEADERS.linkId);
    const known = requested === undefined ? undefined : links.get(requested);
    const resumable = known !== undefined && known.memberId === memberId && !known.ended;
    const received = parseReceivedHeader(header(req, LINK_HEADERS.received)) ?? 0;
    const link = resumable ? known : newLink(memberId);
    wss.handleUpgrade(req, socket, head, (ws) => {
      link.attach(ws, resumable ? received : 0, resumable);
      log.info({ link_id: link.id, member_id: memberId, resumed: resumable }, resumable ? "bridge link resumed" : "bridge link opened");
      options.metrics.linkEvent(resumable ? "resumed" : "opened");
      if (!resumable) options.onNewLink(link);
    });
  }

  function newLink(memberId: MemberId): ServerLink {
    const link = new ServerLink({
      id: newLinkId(),
      memberId,
      resumeMs: options.resumeMs,
      pingMs: options.pingMs,
      log,
      onEnded: (ended) => {
        links.delete(ended.id);
        options.metrics.linkEvent("ended");
      },
    });
    links.set(link.id, link);
    return link;
  }

  const port = await listen(server, options.port, options.host);
  const host = urlHost(options.host);
  return {
    url: `${options.tls === undefined ? "ws" : "wss"}://${host}:${port}`,
    port,
    links: () => [...links.values()],
    dropSockets() {
      for (const ws of wss.clients) ws.terminate();
    },
    async stop() {
      for (const link of [...links.values()]) link.end("the gateway is stopping");
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const STATUS_TEXT: Readonly<Record<number, string>> = { 401: "Unauthorized", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable" };

/** Answers an upgrade request with a plain HTTP error and closes the socket. */
function refuse(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = `${message}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
