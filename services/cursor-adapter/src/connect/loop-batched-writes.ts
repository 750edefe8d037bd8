/**
 * Writes of one pass of the event loop joined into one: chunks pushed while
 * a pass runs (e.g. the KV GETs a burst of BidiAppend answers starts, each
 * answer its own I/O callback) are written together in the loop's check
 * phase (setImmediate), in order, instead of one socket write each. Nothing
 * waits longer than the pass it was pushed in; flush() writes at once.
 */
export class LoopBatchedWrites {
  readonly #write: (chunk: Buffer) => void;
  readonly #queued: Buffer[] = [];
  #scheduled = false;

  /** `write` gets each batch (never empty). */
  constructor(write: (chunk: Buffer) => void) {
    this.#write = write;
  }

  push(chunk: Buffer): void {
    this.#queued.push(chunk);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes what is queued now (a later scheduled flush then finds nothing). */
  flush(): void {
    this.#scheduled = false;
    const queued = this.#queued;
    if (queued.length === 0) return;
    const chunk = queued.length === 1 ? queued[0]! : Buffer.concat(queued);
    queued.length = 0;
    this.#write(chunk);
  }
}
