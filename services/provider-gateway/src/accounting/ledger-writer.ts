/**
 * Writes settled calls to the store (accounting.settle) off the call's path:
 * the caller has its answer before its ledger row exists. A write the store
 * cannot take now (unavailable) is tried again with backoff (0.25 s doubling
 * to 5 s) until it lands or the writer is flushed at shutdown and its
 * deadline passes; the write is idempotent by ticket, so a repeat is
 * harmless. A write the store refuses (invalid: a bug) is logged and dropped.
 * At most `concurrency` writes are in flight; the rest wait in order.
 */
import type { StoreRequest } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { StoreFailure, type StoreClient } from "@byok/store-client";

export type SettleStore = Pick<StoreClient, "settleCall">;

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
  readonly #queue: Pending[] = [];
  readonly #running = new Set<Promise<void>>();
  #deadline: number | undefined;
  #idle: Array<() => void> = [];

  constructor(store: SettleStore, options: { log: Logger; concurrency?: number }) {
    this.#store = store;
    this.#log = options.log;
    this.#concurrency = options.concurrency ?? 8;
  }

  /** Queues a settled call; `done` runs once it is written or given up. */
  enqueue(request: StoreRequest<"settleCall">, done: () => void): void {
    this.#queue.push({ request, done });
    this.#pump();
  }

  /** Writes not finished yet (queued or in flight). */
  get backlog(): number {
    return this.#queue.length + this.#running.size;
  }

  /** Resolves once every queued write finished; after `timeoutMs` the rest is given up (logged). */
  async flush(timeoutMs: number): Promise<void> {
    this.#deadline = Date.now() + timeoutMs;
    if (this.backlog === 0) return;
    await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  #pump(): void {
    while (this.#running.size < this.#concurrency && this.#queue.length > 0) {
      const next = this.#queue.shift() as Pending;
      const task = this.#write(next).finally(() => {
        this.#running.delete(task);
        next.done();
        this.#pump();
        if (this.backlog === 0) for (const resolve of this.#idle.splice(0)) resolve();
      });
      this.#running.add(task);
    }
  }

  async #write(pending: Pending): Promise<void> {
    const callRef = pending.request.entry?.callRef;
    let delay = FIRST_BACKOFF_MS;
    for (;;) {
      try {
        await this.#store.settleCall(pending.request);
        return;
      } catch (err) {
        const retryable = err instanceof StoreFailure && err.retryable;
        const pastDeadline = this.#deadline !== undefined && Date.now() >= this.#deadline;
        if (!retryable || pastDeadline) {
          this.#log.error({ err, call_ref: callRef }, retryable ? "ledger write given up at shutdown: this call is not in the ledger" : "the store refused a ledger write");
          return;
        }
        this.#log.warn({ err, call_ref: callRef, retry_ms: delay }, "ledger write failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, this.#deadline === undefined ? delay : Math.min(delay, Math.max(0, this.#deadline - Date.now()))));
        delay = Math.min(delay * 2, MAX_BACKOFF_MS);
      }
    }
  }
}
