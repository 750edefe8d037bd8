/**
 * The RunSSE side of one request id. The session writes frames whenever it
 * likes; they wait here until a RunSSE connection reads them (the stream can
 * be written before the client attaches, and the client can attach before the
 * session exists). The end outcome is the last item and is written once.
 */
import type { agent } from "@byok/cursor-protocol";
import type { EndOutcome, ServerStream } from "./session-port.ts";

export type StreamItem = { kind: "message"; message: agent.AgentServerMessage } | { kind: "end"; outcome: EndOutcome };

/** What a reader gets from `next`: an item, or why it stopped waiting. */
export type ReadResult = StreamItem | { kind: "idle" } | { kind: "aborted" };

export class BufferedServerStream implements ServerStream {
  private readonly queue: StreamItem[] = [];
  private endedFlag = false;
  private readonly onEnd: (outcome: EndOutcome) => void;
  /** The waiting read, if any. */
  #waiter: ((result: ReadResult) => void) | undefined;
  /** When the waiting read began (performance.now()) and how long it waits before `idle`. */
  #waitStarted = 0;
  #idleMs = 0;
  /**
   * One idle timer for the stream, left armed across reads: when it fires it
   * ends the waiting read as `idle` if that read waited its full time, and
   * otherwise waits for the rest. A timer and an abort listener set up and
   * torn down for every read (every frame of a streaming run, every KV GET)
   * were about 1.7 % of the adapter's CPU.
   */
  #idleTimer: NodeJS.Timeout | undefined;
  /** The reader's signal, listened to once (a stream has one reader). */
  #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => this.#settle({ kind: "aborted" });

  constructor(onEnd: (outcome: EndOutcome) => void = () => {}) {
    this.onEnd = onEnd;
  }

  get ended(): boolean {
    return this.endedFlag;
  }

  send(message: agent.AgentServerMessage): void {
    if (this.endedFlag) return;
    this.push({ kind: "message", message });
  }

  end(outcome: EndOutcome): void {
    if (this.endedFlag) return;
    this.endedFlag = true;
    this.push({ kind: "end", outcome });
    // Nothing is waited for after the end: the reads left take what is queued.
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.onEnd(outcome);
  }

  /**
   * The next queued item; resolves `idle` when nothing arrives within `idleMs`
   * and `aborted` when `signal` fires first. One reader at a time.
   */
  next(idleMs: number, signal: AbortSignal): Promise<ReadResult> {
    const item = this.queue.shift();
    if (item) return Promise.resolve(item);
    if (signal.aborted) return Promise.resolve({ kind: "aborted" });
    // A read still waiting is superseded (not expected: the registry attaches one reader).
    this.#settle({ kind: "aborted" });
    if (signal !== this.#signal) {
      this.#signal?.removeEventListener("abort", this.#onAbort);
      this.#signal = signal;
      signal.addEventListener("abort", this.#onAbort);
    }
    this.#waitStarted = performance.now();
    this.#idleMs = idleMs;
    if (this.#idleTimer === undefined) this.#armIdle(idleMs);
    return new Promise<ReadResult>((resolve) => {
      this.#waiter = resolve;
    });
  }

  private push(item: StreamItem): void {
    this.queue.push(item);
    if (this.#waiter !== undefined) this.#settle(this.queue.shift()!);
  }

  #settle(result: ReadResult): void {
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    waiter(result);
  }

  #armIdle(ms: number): void {
    this.#idleTimer = setTimeout(() => this.#idleTimerFired(), ms);
    this.#idleTimer.unref();
  }

  #idleTimerFired(): void {
    this.#idleTimer = undefined;
    // No read waiting: the next one arms the timer again.
    if (this.#waiter === undefined) return;
    const waited = performance.now() - this.#waitStarted;
    if (waited >= this.#idleMs) this.#settle({ kind: "idle" });
    else this.#armIdle(Math.max(1, Math.ceil(this.#idleMs - waited)));
  }
}
