/**
 * The proxy listener's CONNECT handling: parse the authority, authenticate the
 * member (407 without a valid key), then either terminate TLS (intercepted
 * Cursor hosts) or open a blind tunnel (every other host).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "@byok/platform";
import { isWithinDomains, normalizeHost } from "./ca.ts";
import type { Interceptor } from "./intercept.ts";
import type { MemberAuthenticator } from "./member-auth.ts";
import type { EdgeProxyMetrics } from "./metrics.ts";
import { openTunnel } from "./tunnel.ts";

export const PROXY_REALM = "BYOK gateway";

export interface Authority {
  host: string;
  port: number;
}

/** Parses a CONNECT target: host:port or [ipv6]:port. */
export function parseAuthority(target: string | undefined): Authority | undefined {
  if (!target) return undefined;
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:/?#[\]@\s]+)):(\d{1,5})$/.exec(target);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  const host = match[1] ?? normalizeHost(match[2] ?? "");
  return host === "" ? undefined : { host, port };
}

export interface ConnectHandlerDeps {
  authenticator: MemberAuthenticator;
  interceptor: Interceptor;
  interceptDomains: readonly string[];
  connectTimeoutMs: number;
  metrics: EdgeProxyMetrics;
  log: Logger;
  /** Open client and tunnel sockets, closed on stop. */
  sockets: Set<Duplex>;
}

function refuse(socket: Duplex, status: string, extraHeaders: string[], message: string): void {
  const body = `${message}\n`;
  const head = [`HTTP/1.1 ${status}`, ...extraHeaders, "content-type: text/plain", `content-length: ${Buffer.byteLength(body)}`, "connection: close"];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

export function createConnectHandler(deps: ConnectHandlerDeps): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    deps.sockets.add(socket);
    socket.on("close", () => deps.sockets.delete(socket));
    socket.on("error", (err) => deps.log.debug({ err: err.message }, "proxy client socket error"));
    void (async () => {
      const authority = parseAuthority(req.url);
      if (!authority) {
        refuse(socket, "400 Bad Request", [], "CONNECT needs host:port");
        return;
      }
      const auth = await deps.authenticator.authenticate(req.headers["proxy-authorization"]);
      switch (auth.kind) {
        case "ok":
          break;
        case "missing":
        case "rejected":
          deps.log.info({ host: authority.host, reason: auth.kind }, "proxy authentication failed");
          deps.metrics.authFailed(auth.kind);
          refuse(socket, "407 Proxy Authentication Required", [`proxy-authenticate: Basic realm="${PROXY_REALM}"`], "a valid gateway key is required (proxy URL http://<name>:<key>@host:port)");
          return;
        case "unavailable":
          deps.log.error({ reason: auth.message }, "cannot verify gateway keys");
          deps.metrics.authFailed("unavailable");
          refuse(socket, "503 Service Unavailable", [], "gateway key verification is unavailable");
          return;
        default: {
          const never: never = auth;
          throw new Error(`unknown auth result ${JSON.stringify(never)}`);
        }
      }
      if (socket.destroyed) return;
      if ("setNoDelay" in socket && typeof socket.setNoDelay === "function") socket.setNoDelay(true);
      const tunnel = { memberId: auth.memberId, host: authority.host, port: authority.port };
      if (isWithinDomains(authority.host, deps.interceptDomains)) {
        await deps.interceptor.intercept(socket, head, tunnel);
      } else {
        openTunnel(socket, head, authority.host, authority.port, { connectTimeoutMs: deps.connectTimeoutMs, log: deps.log, track: deps.sockets });
      }
    })().catch((err: unknown) => {
      deps.log.error({ err }, "CONNECT handling failed");
      socket.destroy();
    });
  };
}
