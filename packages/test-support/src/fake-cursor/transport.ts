/**
 * How the fake client reaches the server: straight to the cursor adapter
 * (`baseUrl` = http://127.0.0.1:port), or like the real IDE through an HTTP
 * CONNECT proxy (the edge proxy) that terminates TLS with a team CA
 * (`baseUrl` = https://api2.cursor.sh, `proxy`, `ca`).
 *
 * Plain node:http/https with keep-alive agents, so the response body of RunSSE
 * arrives chunk by chunk exactly as the server flushed it.
 */
import http from "node:http";
import https from "node:https";
import tls from "node:tls";
import type { Duplex } from "node:stream";

export interface ProxyOptions {
  /** http://host:port of the CONNECT proxy. */
  url: string;
  /** Value of the Proxy-Authorization header (e.g. "Basic ..."), if the proxy wants one. */
  authorization?: string;
}

export interface TransportOptions {
  /** Origin the client talks to, e.g. http://127.0.0.1:8787 or https://api2.cursor.sh. */
  baseUrl: string;
  proxy?: ProxyOptions;
  /** Extra trusted CA certificate(s) (PEM) for TLS origins, e.g. the team CA. */
  ca?: string | Buffer | Array<string | Buffer>;
  /**
   * Connections open at once (default 32). Each RunSSE holds one for the whole run and its
   * BidiAppends (KV ACKs, tool results) need others: clients with many runs at once raise it.
   */
  maxSockets?: number;
}

export class ProxyConnectError extends Error {
  override readonly name = "ProxyConnectError";
  readonly status: number;
  constructor(status: number, target: string) {
    super(`proxy refused CONNECT ${target}: HTTP ${status}`);
    this.status = status;
  }
}

export interface UnaryResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface StreamResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The response body as it arrives. */
  body: AsyncIterable<Buffer>;
  /** Drop the connection (a client disconnect as the server sees it). */
  abort(): void;
}

type Agent = http.Agent | https.Agent;

/** createConnection's callback wants a stream argument even on error; node ignores it then. */
const NO_STREAM = undefined as unknown as Duplex;

/** An https.Agent whose sockets are TLS over a CONNECT tunnel through the proxy. */
class TunnelAgent extends https.Agent {
  private readonly proxy: ProxyOptions;
  private readonly secure: boolean;
  private readonly trustedCa: TransportOptions["ca"];

  constructor(proxy: ProxyOptions, secure: boolean, ca: TransportOptions["ca"], maxSockets: number) {
    super({ keepAlive: true, maxSockets });
    this.proxy = proxy;
    this.secure = secure;
    this.trustedCa = ca;
  }

  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const done = callback ?? (() => undefined);
    const host = String(options.host ?? options.hostname ?? "localhost");
    const port = Number(options.port ?? (this.secure ? 443 : 80));
    const target = `${host}:${port}`;
    const proxyUrl = new URL(this.proxy.url);
    const headers: Record<string, string> = { host: target };
    if (this.proxy.authorization !== undefined) headers["proxy-authorization"] = this.proxy.authorization;
    const req = http.request({ host: proxyUrl.hostname, port: proxyUrl.port || 80, method: "CONNECT", path: target, headers, agent: false });
    req.once("connect", (res, socket, head) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        done(new ProxyConnectError(res.statusCode ?? 0, target), NO_STREAM);
        return;
      }
      if (head.length > 0) socket.unshift(head);
      if (!this.secure) {
        done(null, socket);
        return;
      }
      const tlsOptions: tls.ConnectionOptions = { socket, servername: host, ALPNProtocols: ["http/1.1"] };
      if (this.trustedCa !== undefined) tlsOptions.ca = this.trustedCa;
      const secureSocket = tls.connect(tlsOptions);
      secureSocket.once("secureConnect", () => done(null, secureSocket));
      secureSocket.once("error", (err) => done(err, NO_STREAM));
    });
    req.once("error", (err) => done(err, NO_STREAM));
    req.end();
    return undefined;
  }
}

export class HttpTransport {
  readonly baseUrl: URL;
  private readonly agent: Agent;
  private readonly secure: boolean;
  private readonly ca: TransportOptions["ca"];

  constructor(options: TransportOptions) {
    this.baseUrl = new URL(options.baseUrl);
    this.secure = this.baseUrl.protocol === "https:";
    this.ca = options.ca;
    const maxSockets = options.maxSockets ?? 32;
    if (options.proxy !== undefined) this.agent = new TunnelAgent(options.proxy, this.secure, options.ca, maxSockets);
    else if (this.secure) this.agent = new https.Agent({ keepAlive: true, maxSockets, ...(options.ca === undefined ? {} : { ca: options.ca }) });
    else this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  private request(
    path: string,
    headers: Record<string, string>,
    body: Uint8Array,
    onSent?: () => void,
    signal?: AbortSignal,
  ): Promise<http.IncomingMessage & { req: http.ClientRequest }> {
    const url = new URL(path, this.baseUrl);
    const options: https.RequestOptions = {
      method: "POST",
      host: url.hostname,
      port: url.port || (this.secure ? 443 : 80),
      path: url.pathname + url.search,
      headers: { ...headers, "content-length": String(body.length) },
      agent: this.agent,
    };
    if (this.secure) {
      options.servername = url.hostname;
      if (this.ca !== undefined) options.ca = this.ca;
    }
    return new Promise((resolve, reject) => {
      let abort: (() => void) | undefined;
      const req = (this.secure ? https : http).request(options, (res) => {
        // Once the response is complete the socket may serve another request: never destroy it from here.
        if (abort !== undefined) res.once("close", () => signal?.removeEventListener("abort", abort!));
        resolve(Object.assign(res, { req }));
      });
      req.once("error", reject);
      if (onSent !== undefined) req.once("finish", onSent);
      if (signal !== undefined) {
        abort = (): void => void req.destroy(new Error(signal.reason instanceof Error && signal.reason.name === "TimeoutError" ? "timed out" : "aborted by the client"));
        if (signal.aborted) abort();
        else signal.addEventListener("abort", abort, { once: true });
      }
      req.end(Buffer.from(body));
    });
  }

  /** One unary POST; the whole body is read. Fails after `timeoutMs` (a unary call never waits on the model). */
  async unary(path: string, headers: Record<string, string>, body: Uint8Array, timeoutMs = 30_000): Promise<UnaryResponse> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const res = await this.request(path, headers, body, undefined, timeout);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) };
  }

  /**
   * A streaming POST: resolves at the response headers; the body is read by the
   * caller. `onSent` fires once the request body is written (servers may hold
   * the headers until something else happens, so callers must not wait for
   * them to send the other half); `signal` drops the request before headers.
   */
  async stream(path: string, headers: Record<string, string>, body: Uint8Array, onSent?: () => void, signal?: AbortSignal): Promise<StreamResponse> {
    const res = await this.request(path, headers, body, onSent, signal);
    return {
      status: res.statusCode ?? 0,
      headers: res.headers,
      body: res as AsyncIterable<Buffer>,
      abort: () => {
        res.req.destroy();
        res.destroy();
      },
    };
  }

  close(): void {
    this.agent.destroy();
  }
}
