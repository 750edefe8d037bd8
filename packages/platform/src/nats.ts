/**
 * NATS connection for a service, with a clear error when the server is
 * unreachable. Async stack traces are off (`noAsyncTraces`): the client would
 * otherwise capture a stack for every request it sends, a measurable share of
 * a busy service's CPU, for errors that carry their subject anyway.
 * What the connection is given to send in one pass of the event loop goes out
 * in one socket write (`writeTogetherPerTick`).
 */
import { RequestOne } from "@nats-io/nats-core/internal";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";

export type { NatsConnection };

/** NATS_URL may list several servers of one cluster, comma-separated (the client also learns the others from the cluster). */
export function natsServers(url: string): string[] {
  return url
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export async function connectNats(url: string, name: string, log: Logger): Promise<NatsConnection> {
  try {
    const nc = await connect({ servers: natsServers(url), name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    writeTogetherPerTick(nc);
    answerRequestsWithoutCancelError();
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect" || s.type === "reconnect" || s.type === "error") log.warn({ nats: s.type }, "nats connection status");
      }
    })();
    return nc;
  } catch (cause) {
    throw new Error(`cannot connect to NATS at ${url}: ${(cause as Error).message}`, { cause });
  }
}

/** The part of the client's protocol handler (NatsConnectionImpl.protocol) that writes what is queued. */
interface QueuedWrites {
  flushPending(): void;
  close(err?: Error): Promise<void>;
}

function queuedWritesOf(nc: NatsConnection): QueuedWrites | undefined {
  const protocol = (nc as unknown as { protocol?: Partial<QueuedWrites> }).protocol;
  return typeof protocol?.flushPending === "function" && typeof protocol.close === "function" ? (protocol as QueuedWrites) : undefined;
}

/**
 * The client queues every command (PUB, SUB, PING ...) and writes the queue
 * to its socket in a microtask queued by the first command. Commands given in
 * later promise jobs of the same pass (a reply's continuation that publishes,
 * a request right behind a publish in another async function) came after that
 * microtask and took a write of their own: about one socket write per message,
 * and a loopback write costs the writer the receiver's wake-up as well. Here
 * the write waits for the next tick instead, which runs once the current
 * microtasks are done and before any I/O is polled: the same order, no timer,
 * and one write for what one pass of the event loop sends (a close() in the
 * same pass writes what is queued first). Returns false when
 * the client does not have the expected shape (a changed library; then
 * nothing changes).
 */
export function writeTogetherPerTick(nc: NatsConnection): boolean {
  const queued = queuedWritesOf(nc);
  if (queued === undefined) return false;
  const flush = queued.flushPending.bind(queued);
  let scheduled = false;
  const flushNow = (): void => {
    scheduled = false;
    flush();
  };
  queued.flushPending = () => {
    if (scheduled) return;
    scheduled = true;
    process.nextTick(flushNow);
  };
  // close() destroys the socket without waiting: what is still queued for the tick goes out first.
  const close = queued.close.bind(queued);
  queued.close = (err?: Error) => {
    flush();
    return close(err);
  };
  return true;
}

/** The parts of the client's single-reply request (RequestOne) that its answer path uses. */
interface AnsweredRequest {
  timer?: { cancel(): void };
  deferred: { resolve(msg: unknown): void };
  mux: { cancel(request: unknown): void };
}
type RequestResolver = (this: AnsweredRequest, err: Error | null, msg: unknown) => void;
let requestsPatched: boolean | undefined;

/**
 * nats.js ends an answered request through its cancel(), which rejects the
 * (already resolved) promise with a new RequestError("cancelled"): an Error
 * built, stack and all, for every request that succeeded, then dropped. That
 * was 3.5-4.3% of the run worker's busy time and 1.5% of the cursor
 * adapter's. Here an answer does what cancel() does apart from that: the
 * timeout timer stops, the promise resolves, the request leaves the inbox's
 * table. Failures take the library's own path. Applied once per process;
 * returns false when the class does not have the expected shape (a changed
 * library; then nothing changes).
 */
export function answerRequestsWithoutCancelError(): boolean {
  if (requestsPatched !== undefined) return requestsPatched;
  const proto = RequestOne.prototype as unknown as { resolver?: RequestResolver; cancel?: unknown };
  const original = proto.resolver;
  requestsPatched = typeof original === "function" && typeof proto.cancel === "function";
  if (!requestsPatched || original === undefined) return false;
  proto.resolver = function resolver(this: AnsweredRequest, err: Error | null, msg: unknown): void {
    if (err !== null && err !== undefined) {
      original.call(this, err, msg);
      return;
    }
    this.timer?.cancel();
    this.deferred.resolve(msg);
    this.mux.cancel(this);
  };
  return true;
}

const reconnectListeners = new WeakMap<NatsConnection, Set<() => void>>();

/**
 * Calls `listener` each time `nc` reconnects (one status watcher per
 * connection, however many listeners); returns the unsubscribe.
 */
export function onReconnect(nc: NatsConnection, listener: () => void): () => void {
  let listeners = reconnectListeners.get(nc);
  if (listeners === undefined) {
    const created = new Set<() => void>();
    listeners = created;
    reconnectListeners.set(nc, created);
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type !== "reconnect") continue;
        for (const l of [...created]) l();
      }
    })();
  }
  const set = listeners;
  set.add(listener);
  return () => void set.delete(listener);
}
