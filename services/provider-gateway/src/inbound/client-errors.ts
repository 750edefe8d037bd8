/**
 * The one failure mapper of the HTTP front: every way a request can fail
 * becomes an InboundError (kind, status, message, the offending field), and
 * InboundError becomes the client's own error format: the OpenAI error object
 * `{"error":{message,type,param,code}}` or the Anthropic error body
 * `{"type":"error","error":{type,message}}`, as an HTTP answer before the first
 * byte or as an in-stream error event after it.
 *
 * Statuses: 400 invalid request (naming the field), 401 bad or missing key,
 * 403 model not allowed, 404 unknown model or path, 429 over a budget/limit
 * or upstream rate limit (Retry-After when known), 502 upstream error or
 * broken stream, 503 upstream overloaded / gateway dependency unavailable,
 * 504 upstream timeout.
 */
import { ModelFailureKind } from "@byok/contracts";
import type { ClientFormat } from "./client-format.ts";

export type InboundErrorKind =
  | "invalid_request"
  | "authentication"
  | "permission"
  | "not_found"
  | "rate_limit"
  | "upstream"
  | "overloaded"
  | "timeout"
  | "unavailable";

const STATUS: Readonly<Record<InboundErrorKind, number>> = {
  invalid_request: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  rate_limit: 429,
  upstream: 502,
  overloaded: 503,
  unavailable: 503,
  timeout: 504,
};

const OPENAI_TYPE: Readonly<Record<InboundErrorKind, string>> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  rate_limit: "rate_limit_error",
  upstream: "api_error",
  overloaded: "api_error",
  unavailable: "api_error",
  timeout: "api_error",
};

const ANTHROPIC_TYPE: Readonly<Record<InboundErrorKind, string>> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  rate_limit: "rate_limit_error",
  upstream: "api_error",
  overloaded: "overloaded_error",
  unavailable: "api_error",
  timeout: "timeout_error",
};

export class InboundError extends Error {
  override readonly name = "InboundError";
  readonly kind: InboundErrorKind;
  /** The request field at fault ("messages.2.content"), for 400s. */
  readonly param: string | undefined;
  /** A machine-readable code ("model_not_found", the limit name, the upstream's own code). */
  readonly code: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** An upstream status other than ours, kept for invalid requests the endpoint refused (400/404/413/422). */
  readonly statusOverride: number | undefined;

  constructor(
    kind: InboundErrorKind,
    message: string,
    extra: { param?: string | undefined; code?: string | undefined; retryAfterMs?: number | undefined; status?: number | undefined; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.kind = kind;
    this.param = extra.param;
    this.code = extra.code;
    this.retryAfterMs = extra.retryAfterMs;
    this.statusOverride = extra.status;
  }

  get status(): number {
    return this.statusOverride ?? STATUS[this.kind];
  }
}

/** The body of an error answer in the client's format. */
export function errorBody(format: ClientFormat, error: InboundError): Record<string, unknown> {
  // Anthropic names a body over the size limit apart (413 request_too_large).
  if (format === "anthropic") return { type: "error", error: { type: error.status === 413 ? "request_too_large" : ANTHROPIC_TYPE[error.kind], message: error.message } };
  return { error: { message: error.message, type: OPENAI_TYPE[error.kind], param: error.param ?? null, code: error.code ?? null } };
}

/** Response headers of an error answer (Retry-After in whole seconds when known). */
export function errorHeaders(error: InboundError): Record<string, string> {
  return error.retryAfterMs === undefined ? {} : { "retry-after": String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))) };
}

/** The fields of a ModelFailure the mapper reads. */
export interface FailureFacts {
  readonly kind?: ModelFailureKind | undefined;
  readonly message?: string | undefined;
  readonly httpStatus?: number | undefined;
  readonly providerCode?: string | undefined;
  readonly retryAfterMs?: number | undefined;
}

/** A model call's failure (before or after the first byte) as the error the client sees. */
export function errorOfFailure(failure: FailureFacts): InboundError {
  const message = failure.message ?? "the model call failed";
  const code = failure.providerCode === "" ? undefined : failure.providerCode;
  const status = failure.httpStatus ?? 0;
  switch (failure.kind ?? ModelFailureKind.UNSPECIFIED) {
    case ModelFailureKind.INVALID_REQUEST:
    case ModelFailureKind.CONFIG:
      return new InboundError("invalid_request", message, { code });
    case ModelFailureKind.RATE_LIMITED:
    case ModelFailureKind.OVER_LIMIT:
      return new InboundError("rate_limit", message, { code, retryAfterMs: failure.retryAfterMs === 0 ? undefined : failure.retryAfterMs });
    case ModelFailureKind.AUTH:
      return new InboundError("upstream", `the provider refused the gateway's credentials: ${message}`, { code });
    case ModelFailureKind.UNAVAILABLE:
      return code === "timeout" ? new InboundError("timeout", message, { code }) : new InboundError("upstream", message, { code });
    case ModelFailureKind.PROVIDER_ERROR:
      if (status === 400 || status === 404 || status === 413 || status === 422) return new InboundError("invalid_request", message, { code, status });
      if (status === 503 || status === 529) return new InboundError("overloaded", message, { code });
      if (status === 408 || status === 504) return new InboundError("timeout", message, { code });
      return new InboundError(code === "overloaded_error" ? "overloaded" : "upstream", message, { code });
    case ModelFailureKind.CANCELLED:
      return new InboundError("unavailable", message, { code });
    default:
      // TRUNCATED, PROTOCOL, INCOMPLETE, LENGTH/REFUSAL where no answer can carry them, unknown kinds.
      return new InboundError("upstream", message, { code });
  }
}
