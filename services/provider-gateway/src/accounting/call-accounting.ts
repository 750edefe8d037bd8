/**
 * The accounting seam of the provider gateway: the one place every model call
 * passes, whatever client it comes from (Cursor runs over NATS in
 * invoke-server.ts, the OpenAI/Anthropic-compatible HTTP front in inbound/).
 * A call is admitted before its upstream request and settled after it, with
 * the usage the provider reported (or none). Budgets, rate limits and the
 * ledger are implemented behind this interface by StoreAccounting
 * (store-accounting.ts, the store as the truth); `passThroughAccounting`
 * admits every call and records nothing (ACCOUNTING=off, and tests).
 *
 * Contract for implementations:
 * - admit() decides before any upstream byte: admitted (with a ticket the
 *   implementation may use for a reservation), rejected by a limit (the
 *   caller answers HTTP 429 + Retry-After, or ends the model call with
 *   failure OVER_LIMIT), or forbidden (the member may not use this model:
 *   HTTP 403, or failure CONFIG with provider code "model_not_allowed").
 *   An admit() that throws is an accounting outage: the call is not made
 *   (HTTP 503, failure UNAVAILABLE).
 * - settle() is called exactly once per admitted ticket, after the call ended
 *   in any way (completed, failed, cancelled, client gone), with the
 *   provider-reported usage or undefined, and how the call ended ("ok", or
 *   the ModelFailureKind name / "http_<status>"; for the ledger). It must not
 *   throw for expected conditions; a throw is logged and otherwise ignored.
 * - One request = one model call; `clientKind` lets the ledger split usage
 *   by client.
 */

import type { ClientKind } from "@byok/contracts";

/** Who made the call: a run's client adapter (Cursor, ACP) or a client of the HTTP front, by the API it speaks. */
export type { ClientKind };

/** How the caller names the call: a run's model call, or one HTTP request. */
export type CallReference =
  | { readonly kind: "run-call"; readonly runId: string; readonly callIndex: number }
  | { readonly kind: "request"; readonly requestId: string };

export interface CallAdmission {
  readonly memberId: string;
  readonly clientKind: ClientKind;
  /** BYOK model id (the route), its provider and the model name sent upstream. */
  readonly routeId: string;
  readonly providerId: string;
  readonly upstreamModel: string;
  readonly call: CallReference;
  /** Rough prompt size in tokens (see estimate-tokens.ts), for limits that decide before the provider counts. */
  readonly inputTokenEstimate: number;
  /** The output limit the request may use; undefined = the endpoint's own default. */
  readonly maxOutputTokens: number | undefined;
}

/** Handed back to settle(); `lease` is the implementation's own (a reservation, a counter slot). */
export interface AccountingTicket {
  readonly admission: CallAdmission;
  readonly lease?: unknown;
}

export type AdmissionDecision =
  | { readonly kind: "admitted"; readonly ticket: AccountingTicket }
  | { readonly kind: "rejected"; readonly limit: string; readonly message: string; readonly retryAfterMs: number | undefined }
  | { readonly kind: "forbidden"; readonly message: string };

/** Provider-reported token counts; a field the provider did not report is undefined (never 0 for unknown). */
export interface CallUsage {
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  readonly cacheReadTokens?: number | undefined;
  readonly cacheWriteTokens?: number | undefined;
  readonly reasoningTokens?: number | undefined;
}

export interface CallAccounting {
  admit(call: CallAdmission): Promise<AdmissionDecision>;
  settle(ticket: AccountingTicket, usage: CallUsage | undefined, outcome?: string): Promise<void>;
}

/** Admits every call and records nothing: the gateway's default until the control plane provides its own. */
export const passThroughAccounting: CallAccounting = {
  admit: (call) => Promise.resolve({ kind: "admitted", ticket: { admission: call } }),
  settle: () => Promise.resolve(),
};

/** The run's call reference from a ModelRequest call id (`<run_id>:<provider_call_index>`). */
export function runCallReference(runId: string, callId: string): CallReference {
  const index = Number(callId.slice(callId.lastIndexOf(":") + 1));
  return Number.isInteger(index) && index > 0 && callId.includes(":") ? { kind: "run-call", runId, callIndex: index } : { kind: "request", requestId: callId };
}

/** CallUsage from the gateway's Usage (unset fields stay undefined). */
export function callUsageOf(usage: { inputTokens?: bigint; outputTokens?: bigint; cacheReadTokens?: bigint; cacheWriteTokens?: bigint; reasoningTokens?: bigint } | undefined): CallUsage | undefined {
  if (usage === undefined) return undefined;
  const n = (v: bigint | undefined): number | undefined => (v === undefined ? undefined : Number(v));
  return {
    inputTokens: n(usage.inputTokens),
    outputTokens: n(usage.outputTokens),
    cacheReadTokens: n(usage.cacheReadTokens),
    cacheWriteTokens: n(usage.cacheWriteTokens),
    reasoningTokens: n(usage.reasoningTokens),
  };
}
