/**
 * The admin API's one failure boundary: every error an API call can end with
 * becomes an HTTP status and `{"error": {"kind", "message"}}`. Store
 * failures keep the store's kind; bad input is `invalid`; anything else is
 * `internal` (logged, its message not sent).
 */
import { StoreFailure, type StoreFailureKind } from "@byok/store-client";
import { ActionInputError } from "../actions/admin-actions.ts";

export type ApiFailureKind = StoreFailureKind | "unauthorized" | "forbidden_origin" | "csrf" | "not_found_route" | "method_not_allowed" | "too_large" | "unsupported_media_type";

export interface ApiFailure {
  readonly status: number;
  readonly kind: ApiFailureKind;
  readonly message: string;
  /** Not the caller's fault: worth logging with the cause. */
  readonly unexpected: boolean;
}

const STORE_STATUS: Record<StoreFailureKind, number> = {
  not_found: 404,
  invalid: 400,
  forbidden: 403,
  not_active: 409,
  head_mismatch: 409,
  unavailable: 503,
  internal: 502,
};

export class RequestError extends Error {
  override readonly name = "RequestError";
  readonly status: number;
  readonly kind: ApiFailureKind;
  constructor(status: number, kind: ApiFailureKind, message: string) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

export function apiFailureOf(error: unknown): ApiFailure {
  if (error instanceof RequestError) return { status: error.status, kind: error.kind, message: error.message, unexpected: false };
  if (error instanceof ActionInputError) return { status: 400, kind: "invalid", message: error.message, unexpected: false };
  if (error instanceof StoreFailure) {
    const unexpected = error.kind === "internal" || error.kind === "unavailable";
    const message = error.kind === "unavailable" ? `the gateway's store did not answer: ${error.detail}` : error.detail;
    return { status: STORE_STATUS[error.kind], kind: error.kind, message, unexpected };
  }
  return { status: 500, kind: "internal", message: "internal error (see the admin service's log)", unexpected: true };
}

export function failureBody(failure: ApiFailure): string {
  return JSON.stringify({ error: { kind: failure.kind, message: failure.message } });
}
