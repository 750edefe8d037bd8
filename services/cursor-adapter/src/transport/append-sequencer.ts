/**
 * Orders the BidiAppends of one request id by append_seqno. Appends arrive as
 * concurrent HTTP requests, so a later seqno can overtake an earlier one: early
 * arrivals wait in a bounded buffer, and a seqno below the next expected one
 * (a retry or duplicate) is reported as such so the caller can ack and drop it.
 */

export type OfferResult =
  | { kind: "queued" }
  | { kind: "duplicate" }
  /** Too many early arrivals are waiting for a missing seqno. */
  | { kind: "overflow"; limit: number };

export class AppendSequencer<T> {
  private nextSeqno = 0;
  private readonly early = new Map<number, T>();
  private readonly maxEarly: number;

  constructor(maxEarly: number) {
    this.maxEarly = maxEarly;
  }

  /** The seqno that must arrive before anything else can be released. */
  get expected(): number {
    return this.nextSeqno;
  }

  /** Queue one append; `takeReady` releases it once every lower seqno has been taken. */
  offer(seqno: number, item: T): OfferResult {
    if (seqno < this.nextSeqno || this.early.has(seqno)) return { kind: "duplicate" };
    if (seqno !== this.nextSeqno && this.early.size >= this.maxEarly) return { kind: "overflow", limit: this.maxEarly };
    this.early.set(seqno, item);
    return { kind: "queued" };
  }

  /** Remove and return the appends that are now in order (possibly none). */
  takeReady(): T[] {
    const ready: T[] = [];
    for (;;) {
      const item = this.early.get(this.nextSeqno);
      if (item === undefined) return ready;
      this.early.delete(this.nextSeqno);
      this.nextSeqno += 1;
      ready.push(item);
    }
  }
}
