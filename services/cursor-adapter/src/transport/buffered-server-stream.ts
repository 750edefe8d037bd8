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
  private wake: (() => void) | undefined;
  private endedFlag = false;
  private readonly onEnd: (outcome: EndOutcome) => void;

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
    return new Promise<ReadResult>((resolve) => {
      const finish = (result: ReadResult): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.wake = undefined;
        resolve(result);
      };
      const onAbort = (): void => finish({ kind: "aborted" });
      const timer = setTimeout(() => finish({ kind: "idle" }), idleMs);
      signal.addEventListener("abort", onAbort, { once: true });
      this.wake = () => {
        const queued = this.queue.shift();
        if (queued) finish(queued);
      };
    });
  }

  private push(item: StreamItem): void {
    this.queue.push(item);
    this.wake?.();
  }
}
