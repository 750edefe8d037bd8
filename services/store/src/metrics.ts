/**
 * The store's series (registered on the service's registry, see
 * packages/platform/src/metrics.ts):
 *
 *   byok_store_operation_duration_seconds{operation, outcome}  histogram
 *     One observation per store request, from the decoded request to the
 *     outcome (database work included, bus transfer not). `operation` is the
 *     store operation's bus name (run.begin, tool_round.commit_result, ...);
 *     `outcome` is ok, a rejection kind (not_found, not_active, head_mismatch,
 *     invalid, forbidden), unavailable (database unreachable) or internal.
 */
import { Histogram, secondsSince, type Registry } from "@byok/platform";
import type { RejectionKind } from "./outcome.ts";

export type StoreOperationOutcome = "ok" | RejectionKind | "unavailable" | "internal";

export interface StoreMetrics {
  /** One store request ended; `startedMs` is its performance.now() at the start. */
  operationDone(operation: string, outcome: StoreOperationOutcome, startedMs: number): void;
}

export function createStoreMetrics(registry: Registry): StoreMetrics {
  const duration = new Histogram({
    name: "byok_store_operation_duration_seconds",
    help: "Store request handling time (decoded request to outcome, database included), by operation and outcome.",
    labelNames: ["operation", "outcome"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    operationDone(operation, outcome, startedMs) {
      duration.observe({ operation, outcome }, secondsSince(startedMs));
    },
  };
}
