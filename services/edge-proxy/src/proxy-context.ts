/** What request handlers on an intercepted connection work with. */
import type { Logger } from "@byok/platform";
import type { EdgeProxyMetrics } from "./metrics.ts";
import type { RouteTable } from "./route-table.ts";
import type { Origin } from "./upstream.ts";

/** The authenticated CONNECT a request arrived on. */
export interface TunnelInfo {
  readonly memberId: string;
  /** Host the client asked for (normalised), e.g. api2.cursor.sh. */
  readonly host: string;
  readonly port: number;
}

export interface InterceptDeps {
  readonly adapter: Origin;
  /** The origin for pass-through traffic of a tunnel's host. */
  upstreamFor(tunnel: TunnelInfo): Origin;
  readonly routes: RouteTable;
  readonly byokModelIds: ReadonlySet<string>;
  readonly routeWaitMs: number;
  readonly upstreamUnaryTimeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly metrics: EdgeProxyMetrics;
  readonly log: Logger;
}

/** Largest body the proxy reads to route a request (a first BidiAppend carries the conversation state). */
export const MAX_ROUTED_BODY_BYTES = 64 * 1024 * 1024;
/** Largest unary answer the proxy buffers (model lists, server config). */
export const MAX_UNARY_ANSWER_BYTES = 16 * 1024 * 1024;
