/**
 * The session's failure boundary, in one place: every error the session layer
 * can meet becomes a SessionFailure (sessionFailureOf), and every
 * SessionFailure has one look on Cursor's wire (endOutcomeOf: EndStream code
 * + optional aiserver.ErrorDetails) and one FailureKind for the run owner when
 * the adapter ends the run (closeKindOf). Worker-reported failures (RunFailed)
 * map by their kind; failures the adapter finds itself (bad model, bad
 * request, client blob trouble, store, bus) have their own kinds.
 *
 * Which error is which failure, and why:
 * - SessionError: carries its failure (thrown where the session decides, e.g.
 *   an unknown model or a request id that cannot be a run id).
 * - KvError -> client_blob: the IDE did not answer a blob GET/SET, refused it
 *   or sent bytes that do not match their id. The client's side, worth a retry.
 * - HistoryImportError, RootParseError, TodoBlobError -> protocol: the
 *   client's conversation state cannot be understood.
 * - StoreFailure `forbidden` -> forbidden: the conversation belongs to another
 *   member (the store's verdict, shown as permission_denied).
 * - StoreFailure of any other kind -> store: the gateway's own storage failed
 *   (also `unavailable`, and `invalid`/`not_found`, which only a bug of the
 *   adapter causes); Cursor sees internal, as for a run the worker failed with
 *   STORE, and the owner records STORE.
 * - BusPublishError -> bus: the run could not be handed to the bus (NATS down).
 * - BlobNotSyncedError -> internal: a checkpoint that references a blob this
 *   session never sent or that is not acknowledged is a bug of the adapter's
 *   barrier, not something the client did.
 * - RoundCommitError -> internal: the run owner sent a commit the adapter
 *   cannot project (a bug on the bus contract, not the client's fault).
 * - PromptAssetError -> internal: the gateway's prompt files are broken.
 * - anything else -> internal (a bug).
 *
 * A run the gateway's accounting stopped (RunFailed kind OVER_LIMIT: a budget
 * or rate limit) ends with resource_exhausted and the accounting's own
 * message, which names the limit and when it resets, as a custom error
 * (ERROR_CUSTOM_MESSAGE: Cursor shows our title and text rather than its own
 * plan/usage screens); the limit and the wait ride along in additional_info.
 */
import { create } from "@bufbuild/protobuf";
import { FailureKind, type RunFailed } from "@byok/contracts";
import { aiserver } from "@byok/cursor-protocol";
import { StoreFailure } from "@byok/store-client";
import { KvError } from "../checkpoint/kv-channel.ts";
import { TodoBlobError } from "../checkpoint/todo-blobs.ts";
import { HistoryImportError } from "../request/client-history.ts";
import { RootParseError } from "../root-codec/root-import.ts";
import type { EndOutcome } from "../transport/session-port.ts";
import { BusPublishError } from "@byok/run-client";

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

/** The failure an error stands for (see the module comment for each case). */
export function sessionFailureOf(error: unknown): SessionFailure {
  if (error instanceof SessionError) return error.failure;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof KvError) return { kind: "client_blob", message };
  if (error instanceof HistoryImportError || error instanceof RootParseError || error instanceof TodoBlobError) return { kind: "protocol", message };
  if (error instanceof StoreFailure) return error.kind === "forbidden" ? { kind: "forbidden", message } : { kind: "store", message };
  if (error instanceof BusPublishError) return { kind: "bus", message };
  // BlobNotSyncedError, RoundCommitError, PromptAssetError and bugs.
  return { kind: "internal", message };
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
    case FailureKind.OVER_LIMIT:
      return { kind: "error", code: "resource_exhausted", message, details: overLimitDetails(failed, message) };
    case FailureKind.STORE:
    case FailureKind.UNSPECIFIED:
      return { kind: "error", code: "internal", message };
    default:
      return { kind: "error", code: "internal", message };
  }
}

/** A per-minute limit is worth retrying after its wait; a budget (hours or days away) or a run slot is not. */
const RETRYABLE_WAIT_MS = 60_000;

function overLimitDetails(failed: RunFailed, message: string): aiserver.ErrorDetails {
  const retryable = failed.retryAfterMs > 0 && failed.retryAfterMs <= RETRYABLE_WAIT_MS;
  const details = errorDetails(aiserver.ErrorDetails_Error.CUSTOM_MESSAGE, "Usage limit reached", message, retryable);
  details.isExpected = true;
  if (details.details !== undefined) {
    details.details.showRequestId = false;
    details.details.additionalInfo = { limit: failed.limit, ...(failed.retryAfterMs > 0 ? { retry_after_ms: String(failed.retryAfterMs) } : {}) };
  }
  return details;
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
