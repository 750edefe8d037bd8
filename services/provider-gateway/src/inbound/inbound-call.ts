/**
 * One request of the HTTP front once it is authenticated, parsed, routed and
 * admitted: what the same-shape relay and the translated path both get, and
 * what they hand back for the ledger and the metrics.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { Logger } from "@byok/platform";
import type { CallUsage } from "../accounting/call-accounting.ts";
import type { BoundAdapter } from "../adapters/adapter.ts";
import type { ModelCallObserver } from "../metrics.ts";
import type { RetryPolicy } from "../retry.ts";
import type { Route } from "../routes.ts";
import type { ClientFormat } from "./client-format.ts";

export interface InboundCall {
  readonly format: ClientFormat;
  readonly route: Route;
  readonly adapter: BoundAdapter;
  /** The client's JSON body. */
  readonly body: Record<string, unknown>;
  readonly stream: boolean;
  /** The model name the client asked for (echoed in translated answers). */
  readonly requestedModel: string;
  readonly memberId: string;
  readonly requestId: string;
  readonly headers: IncomingHttpHeaders;
  readonly query: URLSearchParams;
  readonly res: ServerResponse;
  /** Aborts when the client goes away or the gateway stops. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  readonly policy: RetryPolicy;
  /** Date.now() when the request arrived. */
  readonly started: number;
  /** Timings for the metrics (metrics.ts), set once the call is admitted. */
  readonly observer?: ModelCallObserver;
}

export interface CallResult {
  /** "ok", or what went wrong: a ModelFailureKind name or "http_<status>". */
  readonly outcome: string;
  readonly usage: CallUsage | undefined;
  readonly firstByteMs: number | undefined;
}
