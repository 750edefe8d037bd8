/**
 * Metrics hooks for model calls, left for the control plane (a /metrics
 * exporter, per-member dashboards). Both call paths report here: the NATS
 * path (invoke-server.ts) and the HTTP front (inbound/). The gateway ships
 * `noCallMetrics`; an implementation must be cheap and must not throw (it
 * runs on the hot path, after the response bytes it describes were sent).
 */
import type { CallUsage, ClientKind } from "./call-accounting.ts";

export type CallPath = "nats" | "same-shape" | "translated";

export interface CallStarted {
  readonly clientKind: ClientKind;
  readonly routeId: string;
  readonly path: CallPath;
}

export interface CallEnded extends CallStarted {
  /** "ok", or the failure: a ModelFailureKind name, or "http_<status>" for an answer the HTTP front gave itself. */
  readonly outcome: string;
  readonly durationMs: number;
  /** Time to the first byte of the answer (undefined when none was sent). */
  readonly firstByteMs: number | undefined;
  readonly usage: CallUsage | undefined;
}

export interface CallMetrics {
  callStarted(call: CallStarted): void;
  callEnded(call: CallEnded): void;
}

export const noCallMetrics: CallMetrics = {
  callStarted: () => undefined,
  callEnded: () => undefined,
};
