/**
 * The gateway's side of one bridge link (@byok/resumable-link): a member's
 * bridge connected over WebSocket, and the link that outlives its sockets.
 * Every connection starts with a hello frame (link id, resumed or new, how
 * many bridge messages the gateway holds); then both sides send again what the
 * other lacks. A socket that drops (no close frame, or two unanswered pings)
 * leaves the link waiting `resumeMs` for the bridge to come back; a clean
 * close from the bridge (code 1000: the editor quit) or the resume window
 * running out ends the link, and with it the ACP connection it carries.
 */
import type { RawData, WebSocket } from "ws";
import type { MemberId } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { decodeFrame, encodeFrame, LinkEndpoint, LinkProtocolError } from "@byok/resumable-link";

export interface ServerLinkOptions {
  readonly id: string;
  readonly memberId: MemberId;
  readonly resumeMs: number;
  readonly pingMs: number;
  readonly log: Logger;
  /** The link ended for good (clean close, resume window over, gateway stopping). */
  onEnded(link: ServerLink): void;
}

export class ServerLink {
  readonly id: string;
  readonly memberId: MemberId;
  readonly #options: ServerLinkOptions;
  readonly #endpoint: LinkEndpoint;
  #socket: WebSocket | undefined;
  #expiry: NodeJS.Timeout | undefined;
  #ping: NodeJS.Timeout | undefined;
  #ended = false;
  #onMessage: (text: string) => void = () => undefined;
  readonly #endListeners: Array<() => void> = [];

  constructor(options: ServerLinkOptions) {
    this.id = options.id;
    this.memberId = options.memberId;
    this.#options = options;
    this.#endpoint = new LinkEndpoint({
      onMessage: (text) => this.#onMessage(text),
      onOverflow: () => {
        options.log.warn({ link_id: this.id }, "bridge link has too much unacknowledged; ending it");
        this.end("too much unacknowledged on the link");
      },
    });
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Messages from the bridge go here (in order, once). */
  onMessage(handler: (text: string) => void): void {
    this.#onMessage = handler;
  }

  /** Runs `listener` once the link ends (at once when it has ended). */
  whenEnded(listener: () => void): void {
    if (this.#ended) listener();
    else this.#endListeners.push(listener);
  }

  /** A message for the bridge; kept until it acknowledges it. */
  send(text: string): void {
    if (!this.#ended) this.#endpoint.send(text);
  }

  /** A (new) socket of this link; the bridge holds `bridgeReceived` of the gateway's messages. */
  attach(socket: WebSocket, bridgeReceived: number, resumed: boolean): void {
    if (this.#ended) {
      socket.close(1011, "link ended");
      return;
    }
    if (this.#expiry !== undefined) clearTimeout(this.#expiry);
    this.#expiry = undefined;
    const previous = this.#socket;
    if (previous !== undefined) {
      // The bridge came back before this side noticed the old socket died.
      this.#release(previous);
      previous.terminate();
    }
    this.#socket = socket;
    socket.send(encodeFrame({ t: "hello", link: this.id, resumed, received: this.#endpoint.received }));
    try {
      this.#endpoint.attach({ send: (text) => socket.send(text) }, bridgeReceived);
    } catch (error) {
      this.#options.log.warn({ link_id: this.id, err: error }, "bridge resumed with an impossible count; ending the link");
      this.end("link protocol error");
      return;
    }
    let alive = true;
    socket.on("pong", () => (alive = true));
    socket.on("message", (data: RawData, isBinary: boolean) => {
      alive = true;
      try {
        if (isBinary) throw new LinkProtocolError("binary frame on the link");
        this.#endpoint.receive(decodeFrame(rawText(data)));
      } catch (error) {
        this.#options.log.warn({ link_id: this.id, err: error }, "bridge link protocol error; dropping the socket");
        socket.terminate();
      }
    });
    socket.on("close", (code: number) => this.#closed(socket, code));
    socket.on("error", (error: Error) => this.#options.log.debug({ link_id: this.id, err: error }, "bridge socket error"));
    this.#ping = setInterval(() => {
      if (!alive) {
        this.#options.log.info({ link_id: this.id }, "bridge socket silent; dropping it");
        socket.terminate();
        return;
      }
      alive = false;
      socket.ping();
    }, this.#options.pingMs);
    this.#ping.unref();
  }

  /** Ends the link for good (idempotent). */
  end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#expiry !== undefined) clearTimeout(this.#expiry);
    const socket = this.#socket;
    if (socket !== undefined) {
      this.#release(socket);
      socket.close(1000, reason.slice(0, 100));
    }
    this.#socket = undefined;
    this.#endpoint.close();
    this.#options.log.info({ link_id: this.id, reason }, "bridge link ended");
    this.#options.onEnded(this);
    for (const listener of this.#endListeners.splice(0)) listener();
  }

  #closed(socket: WebSocket, code: number): void {
    if (this.#socket !== socket) return;
    this.#release(socket);
    this.#socket = undefined;
    if (code === 1000) {
      this.end("the bridge closed the link");
      return;
    }
    this.#options.log.info({ link_id: this.id, code, resume_ms: this.#options.resumeMs }, "bridge socket dropped; waiting for the bridge to resume");
    this.#expiry = setTimeout(() => this.end("the bridge did not come back"), this.#options.resumeMs);
    this.#expiry.unref();
  }

  #release(socket: WebSocket): void {
    if (this.#ping !== undefined) clearInterval(this.#ping);
    this.#ping = undefined;
    this.#endpoint.detach();
    socket.removeAllListeners("message");
    socket.removeAllListeners("close");
    socket.removeAllListeners("pong");
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}
