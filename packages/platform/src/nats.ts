/** NATS connection for a service, with a clear error when the server is unreachable. */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";

export type { NatsConnection };

export async function connectNats(url: string, name: string, log: Logger): Promise<NatsConnection> {
  try {
    const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
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
