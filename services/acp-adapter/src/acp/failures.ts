/**
 * The adapter's failure boundary, in one place: every error a request handler
 * meets becomes an AcpFailure (acpFailureOf), and every AcpFailure has one
 * JSON-RPC error the editor shows (requestErrorOf). Run outcomes that ACP
 * models as stop reasons (end_turn, max_tokens, refusal, cancelled) are not
 * failures; they are answered by turn/stop-reason.ts.
 *
 * - AcpError: carries its failure (thrown where the adapter decides).
 * - PromptContentError -> invalid_params: the prompt has content this agent
 *   does not take.
 * - StoreFailure `forbidden` -> session_not_found (another member's
 *   conversation is not shown to exist); any other -> store.
 * - SessionDirectoryError -> sessions: the session bucket on NATS failed.
 * - BusPublishError -> bus: the run could not be handed to the bus.
 * - PromptAssetError and anything else -> internal.
 * The JSON-RPC error's data carries `{ kind }` (and the run failure's kind
 * and retryable flag), so an editor can tell a retryable failure from a bug.
 */
import { FailureKind, ModelFailureKind, type RunFailed } from "@byok/contracts";
import { BusPublishError } from "@byok/run-client";
import { StoreFailure } from "@byok/store-client";
import { SessionDirectoryError } from "../sessions/session-directory.ts";
import { PromptContentError } from "../turn/prompt-message.ts";
import { RequestError } from "./acp-types.ts";

export type AcpFailure =
  | { readonly kind: "invalid_params"; readonly message: string }
  | { readonly kind: "session_not_found"; readonly sessionId: string }
  | { readonly kind: "store"; readonly message: string }
  | { readonly kind: "sessions"; readonly message: string }
  | { readonly kind: "bus"; readonly message: string }
  | { readonly kind: "run_failed"; readonly failed: RunFailed }
  | { readonly kind: "internal"; readonly message: string };

export class AcpError extends Error {
  override readonly name = "AcpError";
  readonly failure: AcpFailure;
  constructor(failure: AcpFailure, options?: { cause?: unknown }) {
    super(failureMessage(failure), options);
    this.failure = failure;
  }
}

export function acpFailureOf(error: unknown, sessionId = ""): AcpFailure {
  if (error instanceof AcpError) return error.failure;
  if (error instanceof RequestError) return { kind: "internal", message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof PromptContentError) return { kind: "invalid_params", message };
  if (error instanceof StoreFailure) return error.kind === "forbidden" ? { kind: "session_not_found", sessionId } : { kind: "store", message };
  if (error instanceof SessionDirectoryError) return { kind: "sessions", message };
  if (error instanceof BusPublishError) return { kind: "bus", message };
  return { kind: "internal", message };
}

export function failureMessage(failure: AcpFailure): string {
  switch (failure.kind) {
    case "session_not_found":
      return `session ${JSON.stringify(failure.sessionId)} not found`;
    case "run_failed":
      return failure.failed.message !== "" ? failure.failed.message : "the run failed";
    default:
      return failure.message;
  }
}

/** The JSON-RPC error of a failure (what the editor shows). */
export function requestErrorOf(failure: AcpFailure): RequestError {
  switch (failure.kind) {
    case "invalid_params":
      return RequestError.invalidParams({ kind: failure.kind }, failure.message);
    case "session_not_found":
      return RequestError.sessionNotFound(failure.sessionId);
    case "store":
      return RequestError.internalError({ kind: failure.kind, retryable: true }, `the gateway's store failed: ${failure.message}`);
    case "sessions":
      return RequestError.internalError({ kind: failure.kind, retryable: true }, `the gateway's session list failed: ${failure.message}`);
    case "bus":
      return RequestError.internalError({ kind: failure.kind, retryable: true }, `the gateway's bus did not take the run: ${failure.message}`);
    case "run_failed":
      return RequestError.internalError(
        { kind: failure.kind, failureKind: FailureKind[failure.failed.kind], modelFailureKind: ModelFailureKind[failure.failed.modelFailureKind], retryable: failure.failed.retryable },
        runFailedText(failure.failed),
      );
    case "internal":
      return RequestError.internalError({ kind: failure.kind }, failure.message);
    default: {
      const unreachable: never = failure;
      throw new Error(`unknown ACP failure ${JSON.stringify(unreachable)}`);
    }
  }
}

function runFailedText(failed: RunFailed): string {
  const message = failed.message !== "" ? failed.message : "the run failed";
  switch (failed.kind) {
    case FailureKind.PROVIDER:
      return `the model provider failed: ${message}`;
    case FailureKind.STORE:
      return `the gateway's store failed: ${message}`;
    case FailureKind.PROTOCOL:
      return `protocol error: ${message}`;
    case FailureKind.CLIENT:
    case FailureKind.UNSPECIFIED:
      return message;
    default:
      return message;
  }
}
