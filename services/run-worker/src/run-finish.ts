/**
 * run.finish as the run actor sends it: one attempt classified into what the
 * actor acts on, and the retries with backoff while the store is unavailable.
 * What to tell the client and how to settle the JetStream message stays with
 * the actor (run-actor.ts).
 */
import { FailureKind, type RunId, type RunRecord, type Usage } from "@byok/contracts";
import { StoreFailure, type StoreClient } from "@byok/store-client";
import { statusOf, type FinalOutcome } from "./run-outcome.ts";
import { isEmptyUsage } from "./usage.ts";

/** Backoff between run.finish attempts while the store is unavailable. */
const FINISH_BACKOFF_FIRST_MS = 250;
const FINISH_BACKOFF_MAX_MS = 2_000;

export type FinishRequest = Parameters<StoreClient["finishRun"]>[0];

/** How a run.finish ended after its retries. */
export type FinishResult =
  | { readonly kind: "recorded"; readonly run: RunRecord }
  /** The store stayed unavailable for the whole retry budget. */
  | { readonly kind: "unavailable"; readonly error: StoreFailure }
  /** A later delivery began the run since this owner's begin (NOT_ACTIVE). */
  | { readonly kind: "superseded"; readonly error: StoreFailure }
  | { readonly kind: "refused"; readonly error: StoreFailure };

/** The run.finish of `outcome` by the owner of begin `beginCount` (usage only when there is some). */
export function finishRequest(runId: RunId, outcome: FinalOutcome, usage: Usage | undefined, beginCount: number): FinishRequest {
  const reported = usage === undefined || isEmptyUsage(usage) ? undefined : usage;
  return {
    runId,
    status: statusOf(outcome),
    failureKind: outcome.kind === "failed" ? outcome.failure.kind : FailureKind.UNSPECIFIED,
    failureMessage: outcome.kind === "failed" ? outcome.failure.message : outcome.kind === "cancelled" ? outcome.reason : "",
    ...(reported === undefined ? {} : { usage: reported }),
    beginCount,
  };
}

/** One run.finish. */
export async function finishOnce(store: Pick<StoreClient, "finishRun">, request: FinishRequest): Promise<FinishResult> {
  try {
    return { kind: "recorded", run: await store.finishRun(request) };
  } catch (err) {
    if (!(err instanceof StoreFailure)) throw err;
    if (err.kind === "unavailable") return { kind: "unavailable", error: err };
    return err.kind === "not_active" ? { kind: "superseded", error: err } : { kind: "refused", error: err };
  }
}

/** Retries with backoff until recorded, refused, `budgetMs` is spent or `stopping()` says the worker stops. */
export async function retryFinish(store: Pick<StoreClient, "finishRun">, request: FinishRequest, budgetMs: number, stopping: () => boolean): Promise<FinishResult> {
  const deadline = Date.now() + budgetMs;
  let delay = FINISH_BACKOFF_FIRST_MS;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(delay, deadline - Date.now()))));
    const result = await finishOnce(store, request);
    if (result.kind !== "unavailable" || Date.now() >= deadline || stopping()) return result;
    delay = Math.min(delay * 2, FINISH_BACKOFF_MAX_MS);
  }
}
