/**
 * Taking PreparedRuns off the RUNS work queue (design/ARCHITECTURE.md §3.1):
 * the streams are ensured (same config as the adapter), the durable pull
 * consumer shared by all workers is ensured (explicit ack, ack wait, max
 * deliver), and this worker pulls whenever it has free run slots: one pull
 * asks for as many runs as there are free slots, up to PULL_BATCH, so a burst
 * is taken in a few pulls rather than one pull per run. Every worker with
 * capacity has a pull waiting and the server hands new runs out across the
 * waiting pulls, so workers stay fair. A pull never asks for more runs than
 * the worker has free slots.
 */
import { AckPolicy, DeliverPolicy, jetstreamManager, type ConsumerConfig, type ConsumerMessages, type JetStreamClient, type JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@byok/contracts";
import { ensureRunStreams, type Logger } from "@byok/platform";

const NANOS_PER_MS = 1_000_000;
/** How long one pull waits at the server before it is renewed. */
const PULL_EXPIRES_MS = 5_000;
const PULL_RETRY_DELAY_MS = 1_000;
/** The most runs one pull asks for. */
export const PULL_BATCH = 64;
/**
 * The consumer's bound on delivered, unacknowledged runs (the server's default
 * is 1000): across all workers, so well above one worker's MAX_CONCURRENT_RUNS.
 * The workers' slots are the real bound.
 */
const MAX_ACK_PENDING = 100_000;

export interface RunQueueOptions {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly names: BusNames;
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
  readonly maxConcurrentRuns: number;
  /** JETSTREAM_REPLICAS (undefined: from the cluster). */
  readonly streamReplicas?: number | undefined;
  readonly log: Logger;
  /** Handles one delivery to its end (ack/nak included); must not throw. */
  readonly onRun: (msg: JsMsg) => Promise<void>;
}

export interface RunQueue {
  /** Stop pulling; runs already taken keep going. Resolves once no pull is outstanding. */
  stopTaking(): Promise<void>;
}

export function runConsumerConfig(names: BusNames, options: { ackWaitMs: number; maxDeliver: number }): Partial<ConsumerConfig> {
  return {
    durable_name: names.runWorkersConsumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: options.ackWaitMs * NANOS_PER_MS,
    max_deliver: options.maxDeliver,
    max_ack_pending: MAX_ACK_PENDING,
    filter_subject: names.runStart,
  };
}

export async function ensureRunConsumer(nc: NatsConnection, names: BusNames, options: { ackWaitMs: number; maxDeliver: number }): Promise<void> {
  const jsm = await jetstreamManager(nc);
  // Creating a durable with an identical config is idempotent; a changed config updates it.
  await jsm.consumers.add(names.runsStream, runConsumerConfig(names, options));
}

export async function startRunQueue(options: RunQueueOptions): Promise<RunQueue> {
  const { nc, js, names, log } = options;
  await ensureRunStreams(nc, names, { replicas: options.streamReplicas });
  await ensureRunConsumer(nc, names, options);
  const consumer = await js.consumers.get(names.runsStream, names.runWorkersConsumer);
  const slots = new RunSlots(options.maxConcurrentRuns);
  let taking = true;
  let pull: ConsumerMessages | undefined;
  let wakeStop: (() => void) | undefined;
  const stopSignal = new Promise<void>((resolve) => {
    wakeStop = resolve;
  });

  const loop = (async () => {
    while (taking) {
      await Promise.race([slots.free(), stopSignal]);
      if (!taking) break;
      try {
        pull = await consumer.fetch({ max_messages: Math.min(slots.freeCount(), PULL_BATCH), expires: PULL_EXPIRES_MS });
        if (!taking) {
          await pull.close();
          break;
        }
        for await (const msg of pull) {
          slots.take();
          void options.onRun(msg).finally(() => slots.release());
        }
      } catch (err) {
        if (!taking) break;
        log.warn({ err }, "pulling runs failed; retrying");
        await Promise.race([new Promise((r) => setTimeout(r, PULL_RETRY_DELAY_MS)), stopSignal]);
      } finally {
        pull = undefined;
      }
    }
  })();

  return {
    async stopTaking() {
      taking = false;
      wakeStop?.();
      await pull?.close();
      await loop;
    },
  };
}

/** Counts running runs against the worker's limit. */
class RunSlots {
  readonly #limit: number;
  #used = 0;
  #waiters: Array<() => void> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  freeCount(): number {
    return Math.max(0, this.#limit - this.#used);
  }

  /** Resolves when at least one slot is free. */
  free(): Promise<void> {
    if (this.#used < this.#limit) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  take(): void {
    this.#used += 1;
  }

  release(): void {
    this.#used -= 1;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
