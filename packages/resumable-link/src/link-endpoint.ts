/**
 * One side of a resumable link: numbers what it sends, keeps every message
 * until the other side acknowledges it, delivers what it receives exactly
 * once and in order, and acknowledges it (cumulatively, a little later, or at
 * once when many are waiting). The socket below may come and go: `attach`
 * gives the endpoint a new one and sends again, in order, everything the
 * other side does not hold; while detached, sends are only kept.
 *
 * Both ends are this class: the member-side bridge and the gateway's adapter.
 * A message is an opaque string.
 */
import { encodeFrame, LinkProtocolError, type LinkFrame } from "./frames.ts";

/** Where frames go while the endpoint is attached. */
export interface LinkSocket {
  send(text: string): void;
}

export interface LinkEndpointOptions {
  /** A message from the other side, in order, once. */
  onMessage(text: string): void;
  /** More than this many characters unacknowledged (default 16 MiB): the link cannot keep its promise. */
  readonly maxUnacked?: number;
  /** Called when `maxUnacked` is exceeded; the endpoint keeps the message anyway. */
  onOverflow?(): void;
  /** How long an acknowledgement may wait for more messages (default 50 ms). */
  readonly ackDelayMs?: number;
}

/** Acknowledge at once when this many received messages are unacknowledged. */
const ACK_EVERY = 64;
const DEFAULT_MAX_UNACKED = 16 * 1024 * 1024;
const DEFAULT_ACK_DELAY_MS = 50;

interface Pending {
  readonly s: number;
  readonly d: string;
}

export class LinkEndpoint {
  readonly #options: LinkEndpointOptions;
  #nextSeq = 1;
  #unacked: Pending[] = [];
  #unackedChars = 0;
  #received = 0;
  #ackSent = 0;
  #ackTimer: NodeJS.Timeout | undefined;
  #socket: LinkSocket | undefined;

  constructor(options: LinkEndpointOptions) {
    this.#options = options;
  }

  /** Messages received in order so far (what a reconnect tells the other side). */
  get received(): number {
    return this.#received;
  }

  /** Messages sent and not acknowledged yet. */
  get unacknowledged(): number {
    return this.#unacked.length;
  }

  get attached(): boolean {
    return this.#socket !== undefined;
  }

  send(text: string): void {
    const pending = { s: this.#nextSeq++, d: text };
    this.#unacked.push(pending);
    this.#unackedChars += text.length;
    if (this.#unackedChars > (this.#options.maxUnacked ?? DEFAULT_MAX_UNACKED)) this.#options.onOverflow?.();
    this.#socket?.send(encodeFrame({ t: "m", s: pending.s, d: pending.d }));
  }

  /**
   * A (new) socket: the other side holds `peerReceived` of this side's
   * messages; the rest is sent again, in order. Throws LinkProtocolError when
   * the other side claims messages this side never sent.
   */
  attach(socket: LinkSocket, peerReceived: number): void {
    this.#acknowledged(peerReceived);
    this.#socket = socket;
    for (const pending of this.#unacked) socket.send(encodeFrame({ t: "m", s: pending.s, d: pending.d }));
    // The handshake of this connection told the other side how many messages this side holds.
    this.#ackSent = this.#received;
  }

  /** The socket went away; messages are kept until the next attach. */
  detach(): void {
    this.#socket = undefined;
    if (this.#ackTimer !== undefined) clearTimeout(this.#ackTimer);
    this.#ackTimer = undefined;
  }

  /** A message or acknowledgement frame from the other side (hello frames belong to the connection, not here). */
  receive(frame: LinkFrame): void {
    switch (frame.t) {
      case "m":
        if (frame.s <= this.#received) return; // sent again after a reconnect: already delivered
        if (frame.s !== this.#received + 1) throw new LinkProtocolError(`message ${frame.s} after ${this.#received}: the link lost messages`);
        this.#received = frame.s;
        this.#scheduleAck();
        this.#options.onMessage(frame.d);
        return;
      case "a":
        this.#acknowledged(frame.s);
        return;
      case "hello":
        throw new LinkProtocolError("a hello frame inside an attached link");
      default: {
        const unreachable: never = frame;
        throw new LinkProtocolError(`unknown frame ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** Stops the acknowledgement timer (the link is closed for good). */
  close(): void {
    this.detach();
  }

  #acknowledged(upTo: number): void {
    if (upTo >= this.#nextSeq) throw new LinkProtocolError(`the other side acknowledges message ${upTo}, but only ${this.#nextSeq - 1} were sent`);
    let drop = 0;
    while (drop < this.#unacked.length && (this.#unacked[drop]?.s ?? Infinity) <= upTo) {
      this.#unackedChars -= this.#unacked[drop]?.d.length ?? 0;
      drop++;
    }
    if (drop > 0) this.#unacked = this.#unacked.slice(drop);
  }

  #scheduleAck(): void {
    if (this.#socket === undefined) return;
    if (this.#received - this.#ackSent >= ACK_EVERY) {
      this.#sendAck();
      return;
    }
    if (this.#ackTimer !== undefined) return;
    this.#ackTimer = setTimeout(() => {
      this.#ackTimer = undefined;
      this.#sendAck();
    }, this.#options.ackDelayMs ?? DEFAULT_ACK_DELAY_MS);
    this.#ackTimer.unref?.();
  }

  #sendAck(): void {
    if (this.#socket === undefined || this.#ackSent === this.#received) return;
    this.#ackSent = this.#received;
    this.#socket.send(encodeFrame({ t: "a", s: this.#received }));
  }
}
