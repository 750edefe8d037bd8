/**
 * Expected outcomes of a store operation: either a value or a rejection whose
 * kind the caller can act on (the bus layer turns it into StoreError).
 */
export type RejectionKind = "not_found" | "not_active" | "head_mismatch" | "invalid" | "forbidden";

export interface Rejection {
  readonly kind: RejectionKind;
  readonly message: string;
}

export type Outcome<T> = { readonly kind: "ok"; readonly value: T } | { readonly kind: "rejected"; readonly rejection: Rejection };

export function ok<T>(value: T): Outcome<T> {
  return { kind: "ok", value };
}

export function reject<T = never>(kind: RejectionKind, message: string): Outcome<T> {
  return { kind: "rejected", rejection: { kind, message } };
}
