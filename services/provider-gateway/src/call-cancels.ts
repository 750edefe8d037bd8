/**
 * The cancels of every model call this gateway process runs, on one
 * subscription to all cancel subjects (`names.allProviderCancels`) made when
 * the invoke server starts.
 *
 * A subscription per call, made when the call's request arrived, raced its own
 * cancel: a caller that cancels right after it asked (a run stopped at once, an
 * early model call dropped) publishes the cancel before the gateway's SUB has
 * reached the server, and the server drops a message nobody listens to; the
 * upstream request then ran until the caller probe found the caller gone. The
 * server delivers one connection's messages in the order it sent them, so the
 * request reaches this subscription's connection before its cancel does, and
 * the call is registered (synchronously, in the request's callback) by then.
 * Every gateway receives every cancel; only the one running the call acts.
 */
import type { ProviderCallId, BusNames } from "@byok/contracts";
import type { Logger, NatsConnection } from "@byok/platform";
import type { Subscription } from "@nats-io/transport-node";

export class CallCancels {
  readonly #names: BusNames;
  readonly #subscription: Subscription;
  /** Cancel subject -> the running calls of that id (a re-issued call may overlap the one it replaces). */
  readonly #calls = new Map<string, Set<() => void>>();

  constructor(nc: NatsConnection, names: BusNames, log: Logger) {
    this.#names = names;
    this.#subscription = nc.subscribe(names.allProviderCancels, {
      callback: (err, msg) => {
        if (err) {
          log.error({ err }, "model call cancel subscription error");
          return;
        }
        const handlers = this.#calls.get(msg.subject);
        if (handlers === undefined) return;
        for (const cancel of [...handlers]) cancel();
      },
    });
  }

  /** `onCancel` runs when the caller cancels call `callId`; the returned function unregisters it. */
  register(callId: ProviderCallId, onCancel: () => void): () => void {
    const subject = this.#names.providerCancel(callId);
    let handlers = this.#calls.get(subject);
    if (handlers === undefined) {
      handlers = new Set();
      this.#calls.set(subject, handlers);
    }
    handlers.add(onCancel);
    return () => {
      handlers.delete(onCancel);
      if (handlers.size === 0 && this.#calls.get(subject) === handlers) this.#calls.delete(subject);
    };
  }

  close(): void {
    this.#subscription.unsubscribe();
  }
}
