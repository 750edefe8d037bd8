/**
 * Why a session ends with an error, and how each reason looks on Cursor's wire
 * (EndStream code + optional aiserver.ErrorDetails). Worker-reported failures
 * (RunFailed) map by their kind; failures the adapter finds itself (bad model,
 * bad request, client blob trouble, store, bus) have their own kinds.
 */
import { create } from "@bufbuild/protobuf";
import { FailureKind, type RunFailed } from "@byok/contracts";
import { aiserver } from "@byok/cursor-protocol";
import type { EndOutcome } from "../transport/session-port.ts";

export type SessionFailure =
  | { kind: "unknown_model"; modelId: string }
  | { kind: "invalid_request"; message: string }
  /** The client's state could not be understood (bad root JSON, ...). */
  | { kind: "protocol"; message: string }
  /** KV GET/SET failed, timed out or returned wrong bytes. */
  | { kind: "client_blob"; message: string }
  | { kind: "store"; message: string }
  /** The conversation belongs to another member. */
  | { kind: "forbidden"; message: string }
  | { kind: "bus"; message: string }
  | { kind: "internal"; message: string }
  | { kind: "run_failed"; failed: RunFailed };

export class SessionError extends Error {
  override readonly name = "SessionError";
  readonly failure: SessionFailure;
  constructor(failure: SessionFailure, options?: { cause?: unknown }) {
    super(failureMessage(failure), options);
    this.failure = failure;
  }
}

export function failureMessage(failure: SessionFailure): string {
  switch (failure.kind) {
    case "unknown_model":
      return `model ${JSON.stringify(failure.modelId)} is not configured on this gateway`;
    case "run_failed":
      return failure.failed.message;
    default:
      return failure.message;
  }
}

export function endOutcomeOf(failure: SessionFailure): EndOutcome {
  switch (failure.kind) {
    case "unknown_model":
      return {
        kind: "error",
        code: "not_found",
        message: failureMessage(failure),
        details: errorDetails(aiserver.ErrorDetails_Error.BAD_MODEL_NAME, "Unknown model", failureMessage(failure), false),
      };
    case "invalid_request":
      return { kind: "error", code: "invalid_argument", message: failure.message };
    case "protocol":
      return { kind: "error", code: "invalid_argument", message: `protocol error: ${failure.message}` };
    case "client_blob":
      return { kind: "error", code: "unavailable", message: failure.message };
    case "store":
    case "internal":
      return { kind: "error", code: "internal", message: failure.message };
    case "forbidden":
      return { kind: "error", code: "permission_denied", message: failure.message };
    case "bus":
      return { kind: "error", code: "unavailable", message: failure.message };
    case "run_failed":
      return runFailedOutcome(failure.failed);
    default: {
      const unreachable: never = failure;
      throw new Error(`unknown session failure ${JSON.stringify(unreachable)}`);
    }
  }
}

function runFailedOutcome(failed: RunFailed): EndOutcome {
  const message = failed.message !== "" ? failed.message : "the run failed";
  switch (failed.kind) {
    case FailureKind.PROVIDER:
      return {
        kind: "error",
        code: "unavailable",
        message,
        details: errorDetails(aiserver.ErrorDetails_Error.PROVIDER_ERROR, "Provider error", message, failed.retryable),
      };
    case FailureKind.PROTOCOL:
      return { kind: "error", code: "invalid_argument", message: `protocol error: ${message}` };
    case FailureKind.CLIENT:
      return { kind: "error", code: "unavailable", message };
    case FailureKind.STORE:
    case FailureKind.UNSPECIFIED:
      return { kind: "error", code: "internal", message };
    default:
      return { kind: "error", code: "internal", message };
  }
}

export function cancelledOutcome(reason: string): EndOutcome {
  return { kind: "error", code: "canceled", message: reason !== "" ? reason : "cancelled" };
}

function errorDetails(error: aiserver.ErrorDetails_Error, title: string, detail: string, isRetryable: boolean): aiserver.ErrorDetails {
  return create(aiserver.ErrorDetailsSchema, {
    error,
    details: { title, detail, isRetryable, showRequestId: true, shouldShowImmediateError: false },
    isExpected: false,
  });
}

/** How the run owner should record a run this adapter ended because of `failure`. */
export function closeKindOf(failure: SessionFailure): FailureKind {
  switch (failure.kind) {
    case "protocol":
    case "invalid_request":
      return FailureKind.PROTOCOL;
    case "store":
      return FailureKind.STORE;
    case "run_failed":
      return failure.failed.kind;
    case "unknown_model":
    case "client_blob":
    case "forbidden":
    case "bus":
    case "internal":
      return FailureKind.CLIENT;
    default: {
      const never: never = failure;
      throw new Error(`unhandled session failure ${JSON.stringify(never)}`);
    }
  }
}
