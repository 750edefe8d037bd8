/**
 * Work queued during one pass of the event loop, run together at its end (in
 * one setImmediate callback). The model calls of a gateway each send the
 * events of a pass as one frame; run from one callback, the frames of every
 * call that had something (the deltas a shared window released together) go
 * to NATS in one socket write rather than one write per call.
 */
export class EndOfPass {
  readonly #queued = new Set<() => void>();
  #scheduled = false;

  /** Runs `work` at the end of this pass (once, however often it is queued). */
  queue(work: () => void): void {
    this.#queued.add(work);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.#run());
  }

  /** `work` ran early or is no longer wanted. */
  cancel(work: () => void): void {
    this.#queued.delete(work);
  }

  #run(): void {
    this.#scheduled = false;
    const queued = [...this.#queued];
    this.#queued.clear();
    for (const work of queued) work();
  }
}
