/**
 * Test client side of the edge proxy: CONNECT through it (with or without a
 * gateway key), TLS on top trusting the team CA, and an https.Agent that does
 * both, so ordinary node:https requests go through the proxy like Cursor's do.
 */
import http from "node:http";
import https from "node:https";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

export function proxyAuthorization(key: string, name = "member"): string {
  return `Basic ${Buffer.from(`${name}:${key}`).toString("base64")}`;
}

export type ConnectOutcome = { kind: "established"; socket: Socket } | { kind: "refused"; status: number; headers: http.IncomingHttpHeaders; body: string };

export interface ProxyEndpoint {
  port: number;
  host?: string;
  /** Proxy-Authorization header value, if any. */
  authorization?: string;
}

/** Sends CONNECT `target` (host:port) to the proxy. */
export function connectThroughProxy(proxy: ProxyEndpoint, target: string): Promise<ConnectOutcome> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: proxy.host ?? "127.0.0.1",
      port: proxy.port,
      method: "CONNECT",
      path: target,
      headers: { host: target, ...(proxy.authorization ? { "proxy-authorization": proxy.authorization } : {}) },
      agent: false,
    });
    req.once("connect", (res, socket) => {
      if (res.statusCode === 200) {
        resolve({ kind: "established", socket });
        return;
      }
      let body = "";
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => (body += d));
      socket.on("end", () => resolve({ kind: "refused", status: res.statusCode ?? 0, headers: res.headers, body }));
      socket.on("error", () => resolve({ kind: "refused", status: res.statusCode ?? 0, headers: res.headers, body }));
      socket.resume();
    });
    req.once("error", reject);
    req.end();
  });
}

/** CONNECT + TLS handshake on top (verifying against `ca`). */
export async function tlsThroughProxy(proxy: ProxyEndpoint, host: string, port: number, ca: string | string[]): Promise<TLSSocket> {
  const outcome = await connectThroughProxy(proxy, `${host}:${port}`);
  if (outcome.kind === "refused") throw new Error(`CONNECT refused: ${outcome.status} ${outcome.body}`);
  return new Promise((resolve, reject) => {
    const isIp = /^[\d.]+$|:/.test(host);
    const socket = tlsConnect({ socket: outcome.socket, ca, ALPNProtocols: ["http/1.1"], ...(isIp ? {} : { servername: host }) });
    socket.once("secureConnect", () => resolve(socket));
    socket.once("error", reject);
  });
}

/** An https.Agent whose connections are CONNECT tunnels through the proxy. */
export class ProxyTunnelAgent extends https.Agent {
  readonly #proxy: ProxyEndpoint;
  readonly #ca: string | string[];

  constructor(proxy: ProxyEndpoint, ca: string | string[], options: https.AgentOptions = {}) {
    super({ keepAlive: false, ...options });
    this.#proxy = proxy;
    this.#ca = ca;
  }

  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, socket: Duplex) => void): Duplex | undefined {
    const host = String(options.host ?? options.hostname ?? "localhost");
    const port = Number(options.port ?? 443);
    tlsThroughProxy(this.#proxy, host, port, this.#ca).then(
      (socket) => callback?.(null, socket),
      (err: Error) => callback?.(err, undefined as unknown as Duplex),
    );
    return undefined;
  }
}

export interface CollectedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** One request through `agent`; resolves with the whole answer. */
export function request(agent: http.Agent, url: string, init: { method?: string; headers?: http.OutgoingHttpHeaders; body?: Buffer | string } = {}): Promise<CollectedResponse> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: init.method ?? "POST", headers: init.headers ?? {}, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(init.body);
  });
}
