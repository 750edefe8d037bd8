/**
 * The store's NATS API: one queue-group subscription per operation on
 * names.store(op). Rejections become `error: StoreError{kind}`; anything thrown
 * becomes an INTERNAL error response, except an unreachable database, which is
 * UNAVAILABLE.
 */
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import {
  QUEUE_GROUPS,
  STORE_OPERATIONS,
  StoreErrorKind,
  type BusNames,
  type StoreErrorSchema,
  type StoreOperation,
  type StoreOperations,
} from "@byok/contracts";
import { BusPayloads, PayloadFailure, serveRequests, type Logger, type NatsConnection } from "@byok/platform";
import type { Subscription } from "@nats-io/transport-node";
import { DatabaseFailure } from "./database.ts";
import type { StoreMetrics } from "./metrics.ts";
import type { Handlers } from "./operations.ts";
import type { Outcome } from "./outcome.ts";
import { storeError } from "./wire.ts";

export interface StoreBusServer {
  /** Stops taking requests and waits for those in flight. */
  close(): Promise<void>;
}

/** Log bindings a request offers (ids only, never content). */
function requestBindings(request: object): Record<string, string> {
  const bindings: Record<string, string> = {};
  for (const [field, binding] of [
    ["runId", "run_id"],
    ["conversationId", "conversation_id"],
    ["roundId", "round_id"],
  ] as const) {
    const value = (request as Record<string, unknown>)[field];
    if (typeof value === "string" && value !== "") bindings[binding] = value;
  }
  return bindings;
}

/** An unreachable database or payload bucket is UNAVAILABLE (callers may retry); anything else thrown is INTERNAL. */
function internalErrorKind(error: unknown): StoreErrorKind {
  if (error instanceof PayloadFailure) return StoreErrorKind.UNAVAILABLE;
  return error instanceof DatabaseFailure && error.kind === "unavailable" ? StoreErrorKind.UNAVAILABLE : StoreErrorKind.INTERNAL;
}

function internalErrorMessage(error: unknown): string {
  if (error instanceof DatabaseFailure) return `database ${error.kind}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

export function serveStoreOperations(nc: NatsConnection, names: BusNames, handlers: Handlers, log: Logger, metrics: StoreMetrics): StoreBusServer {
  const inFlight = new Set<Promise<unknown>>();
  const subscriptions: Subscription[] = [];
  // Requests and replies too large for one NATS message (a long history, a large tool result).
  const payloads = BusPayloads.of(nc, names);

  function serve<I extends DescMessage, O extends DescMessage>(
    operation: StoreOperation<I, O>,
    handler: (request: MessageShape<I>) => Promise<Outcome<MessageInitShape<O>>>,
  ): void {
    const opLog = log.child({ op: operation.name });
    // Every store response message has `StoreError error = 15`.
    const errorResponse = (error: MessageInitShape<typeof StoreErrorSchema>) => ({ error }) as unknown as MessageInitShape<O>;
    const subscription = serveRequests(
      nc,
      names.store(operation.name),
      operation.request,
      operation.response,
      async (request) => {
        const started = performance.now();
        const work = handler(request);
        inFlight.add(work);
        try {
          let outcome: Outcome<MessageInitShape<O>>;
          try {
            outcome = await work;
          } catch (error) {
            metrics.operationDone(operation.name, internalErrorKind(error) === StoreErrorKind.UNAVAILABLE ? "unavailable" : "internal", started);
            throw error;
          }
          metrics.operationDone(operation.name, outcome.kind === "ok" ? "ok" : outcome.rejection.kind, started);
          if (outcome.kind === "ok") return outcome.value;
          opLog.info({ ...requestBindings(request), rejection: outcome.rejection.kind, reason: outcome.rejection.message }, "store request rejected");
          return errorResponse(storeError(outcome.rejection));
        } finally {
          inFlight.delete(work);
        }
      },
      (error) => errorResponse({ kind: internalErrorKind(error), message: internalErrorMessage(error) }),
      { queue: QUEUE_GROUPS.store, log: opLog, payloads },
    );
    subscriptions.push(subscription);
  }

  function serveByName<K extends keyof StoreOperations>(key: K): void {
    serve(STORE_OPERATIONS[key] as StoreOperation<StoreOperations[K]["request"], StoreOperations[K]["response"]>, handlers[key]);
  }
  for (const key of Object.keys(STORE_OPERATIONS) as Array<keyof StoreOperations>) serveByName(key);

  return {
    async close() {
      await Promise.all(subscriptions.map((s) => s.drain()));
      await Promise.allSettled([...inFlight]);
    },
  };
}
