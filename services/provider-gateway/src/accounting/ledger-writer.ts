/**
 * Writes settled calls to the store off the call's path: the caller has its
 * answer before its ledger row exists. Calls that queue up go out together,
 * up to `maxBatch` in one accounting.settle_many (one bus request and one
 * transaction for all of them): those that come while writes are in flight,
 * and those that come within `lingerMs` of a call that found the writer idle
 * (0: an idle writer sends at once; a full batch and flush() never wait).
 * The linger only delays when a row appears, never the call. A batch the store
 * cannot take now (unavailable) is tried again with backoff (0.25 s doubling
 * to 5 s) until it lands or the writer is flushed at shutdown and its deadline
 * passes; writes are idempotent by ticket, so a repeat is harmless. A call the
 * store refuses (invalid: a bug) is logged and dropped, the others of its
 * batch are written. At most `concurrency` batches are in flight.
 */
import type { StoreRequest } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { StoreFailure, type StoreClient } from "@byok/store-client";

export type SettleStore = Pick<StoreClient, "settleCalls">;

interface Pending {
  readonly request: StoreRequest<"settleCall">;
  readonly done: () => void;
}

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 5_000;

export class LedgerWriter {
  readonly #store: SettleStore;
  readonly #log: Logger;
  readonly #concurrency: number;
  readonly #maxBatch: number;
  readonly #lingerMs: number;
  #lingerTimer: NodeJS.Timeout | undefined;
  readonly #queue: Pending[] = [];
  readonly #running = new Set<Promise<void>>();
  #inFlight = 0;
  #deadline: number | undefined;
  #idle: Array<() => void> = [];

  constructor(store: SettleStore, options: { log: Logger; concurrency?: number; maxBatch?: number; lingerMs?: number }) {
    this.#store = store;
    this.#log = options.log;
    this.#concurrency = options.concurrency ?? 2;
    this.#maxBatch = options.maxBatch ?? 200;
    this.#lingerMs = options.lingerMs ?? 0;
  }

  /** Queues a settled call; `done` runs once it is written or given up. */
  enqueue(request: StoreRequest<"settleCall">, done: () => void): void {
    this.#queue.push({ request, done });
    if (this.#lingerMs > 0 && this.#deadline === undefined && this.#queue.length < this.#maxBatch) {
      this.#lingerTimer ??= setTimeout(() => {
        this.#lingerTimer = undefined;
        this.#pump();
      }, this.#lingerMs).unref();
      return;
    }
    clearTimeout(this.#lingerTimer);
    this.#lingerTimer = undefined;
    this.#pump();
  }

  /** Calls not written yet (queued or in flight). */
  get backlog(): number {
    return this.#queue.length + this.#inFlight;
  }

  /** Resolves once every queued write finished; after `timeoutMs` the rest is given up (logged). */
  async flush(timeoutMs: number): Promise<void> {
    this.#deadline = Date.now() + timeoutMs;
    clearTimeout(this.#lingerTimer);
    this.#lingerTimer = undefined;
    this.#pump();
    if (this.backlog === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    if (this.#lingerTimer !== undefined) return;
    while (this.#running.size < this.#concurrency && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#inFlight += batch.length;
      const task = this.#write(batch).finally(() => {
        this.#running.delete(task);
        this.#inFlight -= batch.length;
        for (const pending of batch) pending.done();
        this.#pump();
        if (this.backlog === 0) for (const resolve of this.#idle.splice(0)) resolve();
      });
      this.#running.add(task);
    }
  }

  async #write(batch: readonly Pending[]): Promise<void> {
    let delay = FIRST_BACKOFF_MS;
    for (;;) {
      try {
        const results = await this.#store.settleCalls(batch.map((pending) => pending.request));
        results.forEach((result, i) => {
          if (result instanceof StoreFailure) this.#log.error({ err: result, call_ref: batch[i]?.request.entry?.callRef }, "the store refused a ledger write");
        });
        return;
      } catch (err) {
        const retryable = err instanceof StoreFailure && err.retryable;
        const pastDeadline = this.#deadline !== undefined && Date.now() >= this.#deadline;
        const callRefs = batch.map((pending) => pending.request.entry?.callRef);
        if (!retryable || pastDeadline) {
          this.#log.error({ err, call_refs: callRefs }, retryable ? "ledger write given up at shutdown: these calls are not in the ledger" : "the store refused a ledger write");
          return;
        }
        this.#log.warn({ err, calls: batch.length, retry_ms: delay }, "ledger write failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, this.#deadline === undefined ? delay : Math.min(delay, Math.max(0, this.#deadline - Date.now()))));
        delay = Math.min(delay * 2, MAX_BACKOFF_MS);
      }
    }
  }
}
