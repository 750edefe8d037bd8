/**
 * How a run ends, as the actor reports it to the store and the client.
 * Cancelled is a normal outcome, not a failure; `abandoned` means this worker
 * let go of the run (shutdown) and another delivery will continue it.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { FailureKind, ModelFailureKind, RunStatus, UsageSchema, type RunRecord, type StateEventSchema, type Usage } from "@byok/contracts";
import type { CycleFailure } from "./model-cycle.ts";
import type { StoreFailure } from "@byok/store-client";
import { assertNever } from "./assert-never.ts";

export interface RunFailure {
  readonly kind: FailureKind;
  readonly message: string;
  /** Set for provider failures. */
  readonly modelFailureKind: ModelFailureKind;
  readonly retryable: boolean;
  /** OVER_LIMIT: the limit that refused the call ("" otherwise). */
  readonly limit: string;
  /** OVER_LIMIT: ms until it resets (0 = unknown). */
  readonly retryAfterMs: number;
}

export type RunOutcome =
  | { readonly kind: "completed"; readonly usage: Usage }
  | { readonly kind: "cancelled"; readonly reason: string }
  | { readonly kind: "failed"; readonly failure: RunFailure }
  | { readonly kind: "abandoned"; readonly reason: string };

/** An outcome that ends the run (everything but `abandoned`). */
export type FinalOutcome = Exclude<RunOutcome, { kind: "abandoned" }>;

/** Why the actor stopped a run from outside the engine. */
export type RunStopReason =
  | { readonly kind: "cancel_command"; readonly reason: string }
  | { readonly kind: "client_closed"; readonly error: string; readonly failureKind: FailureKind }
  | { readonly kind: "shutdown" };

export function failed(
  kind: FailureKind,
  message: string,
  extra?: { modelFailureKind?: ModelFailureKind; retryable?: boolean; limit?: string; retryAfterMs?: number },
): Extract<RunOutcome, { kind: "failed" }> {
  return {
    kind: "failed",
    failure: {
      kind,
      message,
      modelFailureKind: extra?.modelFailureKind ?? ModelFailureKind.UNSPECIFIED,
      retryable: extra?.retryable ?? false,
      limit: extra?.limit ?? "",
      retryAfterMs: extra?.retryAfterMs ?? 0,
    },
  };
}

/**
 * A failed model cycle: provider-reported failures are PROVIDER, except a
 * call the gateway's accounting refused (OVER_LIMIT: a budget or rate limit,
 * with the limit and when it resets); broken streams are PROTOCOL.
 */
export function cycleFailed(failure: CycleFailure): FinalOutcome {
  switch (failure.origin) {
    case "provider":
      if (failure.kind === ModelFailureKind.OVER_LIMIT) {
        return failed(FailureKind.OVER_LIMIT, failure.message, { modelFailureKind: failure.kind, retryable: true, limit: failure.providerCode, retryAfterMs: failure.retryAfterMs });
      }
      return failed(FailureKind.PROVIDER, failure.message, { modelFailureKind: failure.kind, retryable: failure.retryable });
    case "protocol":
      return failed(FailureKind.PROTOCOL, failure.message, { modelFailureKind: failure.kind });
    default:
      return assertNever(failure.origin);
  }
}

/** A store error ends the run: a run that lost ownership was superseded (cancelled), anything else is a store failure. */
export function storeFailed(error: StoreFailure): FinalOutcome {
  if (error.kind === "not_active") return { kind: "cancelled", reason: "superseded by a newer run of the conversation" };
  return failed(FailureKind.STORE, error.message, { retryable: error.kind === "unavailable" });
}

export function stopped(reason: RunStopReason): RunOutcome {
  return reason.kind === "shutdown" ? { kind: "abandoned", reason: "worker shutting down" } : stoppedByClient(reason);
}

/** A stop the client asked for (a cancel, or ClientClosed). */
function stoppedByClient(reason: Exclude<RunStopReason, { kind: "shutdown" }>): FinalOutcome {
  switch (reason.kind) {
    case "cancel_command":
      return { kind: "cancelled", reason: reason.reason || "cancelled by the client" };
    case "client_closed":
      // The client ended the run because something failed on its side: a failure, not a cancel.
      return failed(reason.failureKind === FailureKind.UNSPECIFIED ? FailureKind.CLIENT : reason.failureKind, reason.error ? `client closed: ${reason.error}` : "client closed");
    default:
      return assertNever(reason);
  }
}

/**
 * A run cancelled because its client seemed gone (a barrier nobody answered)
 * may have been told why: a client that ends a run on a protocol error
 * publishes ClientClosed (stored before its stream closes) and then stops
 * answering. A stop the client asked for then decides the outcome rather than
 * "client gone" (the actor reads the stored commands once more first).
 */
export function withClientsReason(outcome: FinalOutcome, reason: RunStopReason | undefined): FinalOutcome {
  if (outcome.kind !== "cancelled" || reason === undefined || reason.kind === "shutdown") return outcome;
  return stoppedByClient(reason);
}

export function statusOf(outcome: FinalOutcome): RunStatus {
  switch (outcome.kind) {
    case "completed":
      return RunStatus.COMPLETED;
    case "cancelled":
      return RunStatus.CANCELLED;
    case "failed":
      return RunStatus.FAILED;
    default:
      return assertNever(outcome);
  }
}

/** The outcome a terminal run record stands for. */
export function outcomeOfRecord(record: RunRecord): FinalOutcome {
  switch (record.status) {
    case RunStatus.COMPLETED:
      return { kind: "completed", usage: record.usage ?? create(UsageSchema) };
    case RunStatus.CANCELLED:
      return { kind: "cancelled", reason: record.failureMessage };
    case RunStatus.FAILED:
      return failed(record.failureKind, record.failureMessage);
    default:
      return failed(FailureKind.STORE, `run record in unexpected status ${RunStatus[record.status] ?? record.status}`);
  }
}

/** The terminal state event of an outcome (exactly one per run). */
export function terminalEvent(outcome: FinalOutcome): MessageInitShape<typeof StateEventSchema> {
  switch (outcome.kind) {
    case "completed":
      return { event: { case: "terminal", value: { outcome: { case: "completed", value: {} } } } };
    case "cancelled":
      return { event: { case: "terminal", value: { outcome: { case: "cancelled", value: { reason: outcome.reason } } } } };
    case "failed": {
      const { kind, message, modelFailureKind, retryable, limit, retryAfterMs } = outcome.failure;
      return { event: { case: "terminal", value: { outcome: { case: "failed", value: { kind, message, modelFailureKind, retryable, limit, retryAfterMs } } } } };
    }
    default:
      return assertNever(outcome);
  }
}
