/**
 * The run consumer's state as the JetStream server reports it (consumer info),
 * for the worker's metrics: read every `intervalMs` and when /metrics is
 * scraped, never per message. Reads are shared: a scrape that finds a read in
 * flight, or one younger than FRESH_MS, waits for / reuses it; a scrape-time
 * read slower than the scrape's budget leaves the last values in place.
 */
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@byok/platform";

export interface ConsumerReading {
  /** Messages in the stream not yet delivered to any worker (num_pending). */
  readonly pending: number;
  /** Delivered, not yet acknowledged (num_ack_pending). */
  readonly ackPending: number;
  /** Delivered more than once and not yet acknowledged (num_redelivered). */
  readonly redelivered: number;
  /** Pull requests waiting at the server (num_waiting). */
  readonly waiting: number;
}

export interface ConsumerStatsOptions {
  readonly nc: NatsConnection;
  readonly stream: string;
  readonly consumer: string;
  readonly intervalMs: number;
  readonly onReading: (reading: ConsumerReading) => void;
  readonly log: Logger;
}

/** A reading this young is reused instead of asking the server again. */
const FRESH_MS = 1_000;

export class ConsumerStats {
  readonly #options: ConsumerStatsOptions;
  #jsm: Promise<JetStreamManager> | undefined;
  #inFlight: Promise<void> | undefined;
  #lastReadAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #failing = false;

  constructor(options: ConsumerStatsOptions) {
    this.#options = options;
  }

  /** Starts the interval reads (the first one at once). */
  start(): void {
    if (this.#timer !== undefined) return;
    void this.refresh(this.#options.intervalMs);
    this.#timer = setInterval(() => void this.refresh(this.#options.intervalMs), this.#options.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Reads the consumer info unless a fresh reading exists; resolves within `budgetMs` either way. */
  refresh(budgetMs: number): Promise<void> {
    if (performance.now() - this.#lastReadAt < FRESH_MS) return Promise.resolve();
    this.#inFlight ??= this.#read().finally(() => {
      this.#inFlight = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, budgetMs);
      timer.unref();
    });
    return Promise.race([this.#inFlight, budget]).finally(() => clearTimeout(timer));
  }

  async #read(): Promise<void> {
    const { nc, stream, consumer, log } = this.#options;
    try {
      this.#jsm ??= jetstreamManager(nc).catch((err: unknown) => {
        this.#jsm = undefined;
        throw err;
      });
      const info = await (await this.#jsm).consumers.info(stream, consumer);
      this.#lastReadAt = performance.now();
      this.#failing = false;
      this.#options.onReading({ pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered, waiting: info.num_waiting });
    } catch (err) {
      // Logged once per failing spell; the gauges keep their last values.
      if (!this.#failing) log.warn({ err, stream, consumer }, "cannot read the run consumer's info for metrics");
      this.#failing = true;
    }
  }
}
