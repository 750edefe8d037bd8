/**
 * NATS connection for a service, with a clear error when the server is
 * unreachable. Async stack traces are off (`noAsyncTraces`): the client would
 * otherwise capture a stack for every request it sends, a measurable share of
 * a busy service's CPU, for errors that carry their subject anyway.
 */
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
