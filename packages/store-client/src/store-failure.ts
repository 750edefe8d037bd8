/**
 * StoreFailure: the one error a store call ends with when it does not succeed,
 * whatever went wrong: the store refused the request (its response carried a
 * StoreError) or the bus could not carry it (no store listening, no reply in
 * time, a reply that does not decode). Callers decide on `kind` alone.
 */
import { StoreErrorKind } from "@byok/contracts";
import type { BusErrorKind } from "@byok/platform";

/**
 * - `not_found`: no such run / revision / member / tool round (member.verify:
 *   an unknown or revoked key).
 * - `not_active`: the run is no longer its conversation's active run (a newer
 *   run superseded it).
 * - `head_mismatch`: the conversation head moved since the caller read it.
 * - `invalid`: the store refused the request's content.
 * - `forbidden`: the conversation or run belongs to another member.
 * - `internal`: a bug or an unexpected answer (the store failed, or its reply
 *   did not decode or lacked what it always carries).
 * - `unavailable`: no store answered (no responders, timeout, connection
 *   trouble) or the store's database is unreachable. The only kind worth
 *   retrying as is.
 */
export type StoreFailureKind = "not_found" | "not_active" | "head_mismatch" | "invalid" | "forbidden" | "internal" | "unavailable";

export class StoreFailure extends Error {
  override readonly name = "StoreFailure";
  readonly kind: StoreFailureKind;
  /** The operation's wire name (`run.begin`, `member.verify`, ...). */
  readonly operation: string;
  /** What the store or the bus said, without the operation and kind (for messages shown to people). */
  readonly detail: string;

  constructor(kind: StoreFailureKind, operation: string, detail: string, options?: { cause?: unknown }) {
    super(`store ${operation}: ${kind}: ${detail}`, options);
    this.kind = kind;
    this.operation = operation;
    this.detail = detail;
  }

  /** Whether the same request may succeed later (`unavailable`). */
  get retryable(): boolean {
    return this.kind === "unavailable";
  }
}

/**
 * The failure kind of a StoreError the store answered with. A kind this
 * version does not know (a newer store) and UNSPECIFIED (an error without a
 * kind) are `internal`.
 */
export function failureKindOfStoreError(kind: StoreErrorKind): StoreFailureKind {
  switch (kind) {
    case StoreErrorKind.NOT_FOUND:
      return "not_found";
    case StoreErrorKind.NOT_ACTIVE:
      return "not_active";
    case StoreErrorKind.HEAD_MISMATCH:
      return "head_mismatch";
    case StoreErrorKind.INVALID:
      return "invalid";
    case StoreErrorKind.FORBIDDEN:
      return "forbidden";
    case StoreErrorKind.UNAVAILABLE:
      return "unavailable";
    case StoreErrorKind.INTERNAL:
    case StoreErrorKind.UNSPECIFIED:
      return "internal";
    default:
      return "internal";
  }
}

/**
 * The failure kind of a request the bus could not complete: only an undecodable reply is not `unavailable`
 * (a large payload that could not be stored or read back is retried like a lost message).
 */
export function failureKindOfBusError(kind: BusErrorKind): StoreFailureKind {
  switch (kind) {
    case "timeout":
    case "no_responders":
    case "transport":
    case "payload":
      return "unavailable";
    case "decode":
      return "internal";
    default: {
      const unknown: never = kind;
      throw new Error(`unknown bus error kind ${String(unknown)}`);
    }
  }
}
