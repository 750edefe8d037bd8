/**
 * Run routes shared between edge proxy instances, so that a load balancer may
 * send the RunSSE of a run to another proxy than its first append. All core
 * NATS, nothing stored on the server:
 *
 * - the proxy that decides a route publishes it on `edgeRoute(request id)`
 *   (with the member the request id is bound to);
 * - a proxy whose RunSSE or append waits for a route it does not know
 *   subscribes there and publishes a query on `edgeRouteQuery(request id)`
 *   with that subject as the reply subject, again with backoff while nothing
 *   answers (a decision it subscribed too late for, or one made before it
 *   asked, arrives either way);
 * - every proxy listens to all queries and answers those whose route it knows.
 *
 * Request ids that cannot be subject tokens are never shared (they wait for a
 * local decision only, as with one proxy).
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { EdgeRouteDecisionSchema, EdgeRouteQuerySchema, EdgeRunRoute, isRunId, type BusNames } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { RouteTable } from "./route-table.ts";
import type { RunRoute } from "./routing.ts";

export interface RemoteDecision {
  readonly memberId: string;
  readonly route: RunRoute;
}

export interface RouteExchange {
  /** Tell the other proxies a route this proxy decided. */
  announce(requestId: string, memberId: string, route: RunRoute): void;
  /** Ask the other proxies until one knows the route; undefined once `signal` aborts. */
  lookup(requestId: string, signal: AbortSignal): Promise<RemoteDecision | undefined>;
  close(): void;
}

/** One proxy alone: nothing to tell, nobody to ask. */
export const LOCAL_ROUTES: RouteExchange = {
  announce: () => {},
  lookup: (_requestId, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) resolve(undefined);
      else signal.addEventListener("abort", () => resolve(undefined), { once: true });
    }),
  close: () => {},
};

const FIRST_QUERY_RETRY_MS = 50;
const MAX_QUERY_RETRY_MS = 1_000;

export function natsRouteExchange(nc: NatsConnection, names: BusNames, routes: RouteTable, log: Logger): RouteExchange {
  const queries: Subscription = nc.subscribe(names.allEdgeRouteQueries, {
    callback: (err, msg) => {
      if (err || !msg.reply) return;
      let requestId: string;
      try {
        requestId = fromBinary(EdgeRouteQuerySchema, msg.data).requestId;
      } catch {
        return;
      }
      const known = routes.decision(requestId);
      if (known) msg.respond(encodeDecision(requestId, known.memberId, known.route));
    },
  });
  return {
    announce(requestId, memberId, route) {
      if (!isRunId(requestId)) return;
      nc.publish(names.edgeRoute(requestId), encodeDecision(requestId, memberId, route));
    },
    lookup(requestId, signal) {
      if (!isRunId(requestId)) return LOCAL_ROUTES.lookup(requestId, signal);
      const subject = names.edgeRoute(requestId);
      return new Promise<RemoteDecision | undefined>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        let retryMs = FIRST_QUERY_RETRY_MS;
        const finish = (decision: RemoteDecision | undefined): void => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          answers.unsubscribe();
          resolve(decision);
        };
        const onAbort = (): void => finish(undefined);
        const answers = nc.subscribe(subject, {
          callback: (err, msg) => {
            if (err) return;
            const decision = decodeDecision(msg.data, requestId);
            if (decision) finish(decision);
          },
        });
        const ask = (): void => {
          nc.publish(names.edgeRouteQuery(requestId), toBinary(EdgeRouteQuerySchema, create(EdgeRouteQuerySchema, { requestId })), { reply: subject });
          timer = setTimeout(ask, retryMs);
          retryMs = Math.min(retryMs * 2, MAX_QUERY_RETRY_MS);
        };
        if (signal.aborted) return finish(undefined);
        signal.addEventListener("abort", onAbort, { once: true });
        ask();
      });
    },
    close() {
      queries.unsubscribe();
      log.debug("route exchange closed");
    },
  };
}

function encodeDecision(requestId: string, memberId: string, route: RunRoute): Uint8Array {
  return toBinary(
    EdgeRouteDecisionSchema,
    create(EdgeRouteDecisionSchema, { requestId, memberId, route: route === "local" ? EdgeRunRoute.ADAPTER : EdgeRunRoute.UPSTREAM }),
  );
}

function decodeDecision(data: Uint8Array, requestId: string): RemoteDecision | undefined {
  try {
    const decision = fromBinary(EdgeRouteDecisionSchema, data);
    if (decision.requestId !== requestId || decision.memberId === "") return undefined;
    switch (decision.route) {
      case EdgeRunRoute.ADAPTER:
        return { memberId: decision.memberId, route: "local" };
      case EdgeRunRoute.UPSTREAM:
        return { memberId: decision.memberId, route: "upstream" };
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}
