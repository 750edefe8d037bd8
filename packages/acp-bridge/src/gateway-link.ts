/**
 * The bridge's one connection to the gateway: a WebSocket (wss with the
 * system's roots plus the team's CA) whose upgrade request carries the member
 * key, under a resumable link (@byok/resumable-link). When the socket drops
 * the link reconnects (250 ms doubling to 5 s) and resumes: both sides send
 * again what the other did not get, so the editor's ACP session goes on as if
 * nothing happened. If the gateway no longer knows the link (it restarted, or
 * the drop outlasted its resume window) it answers with a fresh link, and
 * `onReset` tells the bridge that messages in flight may be lost.
 *
 * Why WebSocket (the `ws` library): one long-lived, full-duplex, message-framed
 * connection over TLS that any HTTPS load balancer passes, with the key in
 * the upgrade request (refused before any ACP message) and ping/pong to notice
 * a dead peer. HTTP/2 streams would need our own framing and have no standard
 * liveness for a half-open connection; plain TCP+TLS would need a port the
 * team opens. `ws` is the standard Node implementation (the SDK's own
 * experimental WebSocket transport uses it too, but does not resume).
 */
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import WebSocket from "ws";
import { decodeFrame, LINK_HEADERS, LinkEndpoint, LinkProtocolError } from "@byok/resumable-link";

export type LinkEvent =
  /** Connected; `resumed` says whether the gateway still had the link. */
  | { readonly kind: "connected"; readonly resumed: boolean }
  /** The gateway did not know the link any more: messages in flight on the old link are lost. */
  | { readonly kind: "reset" }
  /** The socket dropped (or could not connect); a reconnect follows. */
  | { readonly kind: "dropped"; readonly reason: string }
  /** The gateway refused the member key (HTTP 401/403): no reconnect. */
  | { readonly kind: "refused"; readonly status: number; readonly message: string };

export interface GatewayLinkOptions {
  readonly url: URL;
  readonly key: string;
  /** PEM text of the team's CA certificate (trusted besides the system roots). */
  readonly caPem: string | undefined;
  onMessage(text: string): void;
  onEvent(event: LinkEvent): void;
  /** No frame or ping from the gateway for this long: the socket is taken for dead (default 45 s). */
  readonly silenceMs?: number;
  /** First reconnect delay, doubling up to maxBackoffMs (defaults 250 ms, 5 s). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
}

export class GatewayLink {
  readonly #options: GatewayLinkOptions;
  #endpoint: LinkEndpoint;
  #linkId: string | undefined;
  #socket: WebSocket | undefined;
  #silence: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #attempt = 0;
  #closed = false;
  #refused = false;

  constructor(options: GatewayLinkOptions) {
    this.#options = options;
    this.#endpoint = this.#newEndpoint();
  }

  /** Reads the CA file once (a bad path fails the bridge at start). */
  static readCa(caFile: string | undefined): string | undefined {
    return caFile === undefined ? undefined : readFileSync(caFile, "utf8");
  }

  start(): void {
    this.#connect();
  }

  /** A message for the gateway; kept (and sent again) until the gateway acknowledges it. */
  send(text: string): void {
    this.#endpoint.send(text);
  }

  /** Ends the link for good: the gateway drops it at once instead of waiting for a resume. */
  close(): void {
    this.#closed = true;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    this.#stopSilence();
    this.#endpoint.close();
    this.#socket?.close(1000, "the editor closed the session");
  }

  #newEndpoint(): LinkEndpoint {
    return new LinkEndpoint({ onMessage: (text) => this.#options.onMessage(text) });
  }

  #connect(): void {
    if (this.#closed || this.#refused) return;
    const headers: Record<string, string> = { authorization: `Bearer ${this.#options.key}` };
    if (this.#linkId !== undefined) {
      headers[LINK_HEADERS.linkId] = this.#linkId;
      headers[LINK_HEADERS.received] = String(this.#endpoint.received);
    }
    const caPem = this.#options.caPem;
    const socket = new WebSocket(this.#options.url, {
      headers,
      ...(caPem === undefined ? {} : { ca: [...rootCertificates, caPem] }),
      handshakeTimeout: 15_000,
      perMessageDeflate: false,
    });
    this.#socket = socket;
    let greeted = false;

    socket.on("unexpected-response", (req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => {
        req.destroy();
        const status = res.statusCode ?? 0;
        if (status === 401 || status === 403) {
          this.#refused = true;
          this.#dropped(socket, `refused (${status})`);
          this.#options.onEvent({ kind: "refused", status, message: body.trim() || `HTTP ${status}` });
        } else {
          this.#dropped(socket, `the gateway answered HTTP ${status}${body.trim() === "" ? "" : `: ${body.trim()}`}`);
        }
      });
      res.on("error", () => this.#dropped(socket, `the gateway answered HTTP ${res.statusCode ?? 0}`));
    });
    socket.on("open", () => this.#touch(socket));
    socket.on("ping", () => this.#touch(socket));
    socket.on("message", (data, isBinary) => {
      this.#touch(socket);
      try {
        if (isBinary) throw new LinkProtocolError("binary frame on the link");
        const frame = decodeFrame(rawText(data));
        if (frame.t === "hello") {
          if (greeted) throw new LinkProtocolError("a second hello on one connection");
          greeted = true;
          this.#greeted(socket, frame.link, frame.resumed, frame.received);
          return;
        }
        if (!greeted) throw new LinkProtocolError("a frame before the hello");
        this.#endpoint.receive(frame);
      } catch (error) {
        // The link's promise is broken on this connection: drop it and resume on a new one.
        socket.terminate();
        this.#dropped(socket, `link protocol error: ${(error as Error).message}`);
      }
    });
    socket.on("close", (code, reason) => this.#dropped(socket, `closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ""})`));
    socket.on("error", (error) => this.#dropped(socket, error.message));
  }

  #greeted(socket: WebSocket, linkId: string, resumed: boolean, received: number): void {
    const lost = this.#linkId !== undefined && (!resumed || linkId !== this.#linkId);
    if (lost) {
      // The gateway no longer has the old link: start numbering afresh.
      this.#endpoint.close();
      this.#endpoint = this.#newEndpoint();
    }
    this.#linkId = linkId;
    this.#attempt = 0;
    this.#endpoint.attach({ send: (text) => socket.send(text) }, received);
    this.#options.onEvent({ kind: "connected", resumed: resumed && !lost });
    if (lost) this.#options.onEvent({ kind: "reset" });
  }

  #dropped(socket: WebSocket, reason: string): void {
    if (this.#socket !== socket) return; // an older socket, already replaced
    this.#socket = undefined;
    this.#stopSilence();
    this.#endpoint.detach();
    socket.removeAllListeners("message");
    if (this.#closed || this.#refused) return;
    this.#options.onEvent({ kind: "dropped", reason });
    const base = this.#options.backoffMs ?? 250;
    const delay = Math.min(this.#options.maxBackoffMs ?? 5_000, base * 2 ** Math.min(this.#attempt, 10));
    this.#attempt++;
    this.#retry = setTimeout(() => this.#connect(), delay);
  }

  #touch(socket: WebSocket): void {
    this.#stopSilence();
    this.#silence = setTimeout(() => {
      socket.terminate();
      this.#dropped(socket, "the gateway went silent");
    }, this.#options.silenceMs ?? 45_000);
  }

  #stopSilence(): void {
    if (this.#silence !== undefined) clearTimeout(this.#silence);
    this.#silence = undefined;
  }
}

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}
