/**
 * The edge proxy's series (no member ids, hosts or paths in labels):
 *
 *   byok_edge_requests_total{route_class}       counter
 *     HTTP requests on intercepted (TLS-terminated) Cursor connections, by
 *     where they went: byok = served or changed by the gateway (both halves
 *     of a run on a BYOK model, the merged model lists, the server config);
 *     passthrough = forwarded to Cursor unchanged (runs on Cursor's own
 *     models, every other path, upgrades). Requests refused by the proxy
 *     itself (403, 413, 504 while waiting for a run's route) are not counted.
 *     Blind CONNECT tunnels to other hosts are not HTTP requests here.
 *   byok_edge_proxy_auth_failures_total{reason} counter
 *     CONNECTs refused for their gateway key: missing (no usable
 *     Proxy-Authorization), rejected (unknown or revoked key), unavailable
 *     (the store could not verify it; answered 503).
 */
import { Counter, type Registry } from "@byok/platform";

export type RouteClass = "byok" | "passthrough";
export type ProxyAuthFailure = "missing" | "rejected" | "unavailable";

export interface EdgeProxyMetrics {
  request(routeClass: RouteClass): void;
  authFailed(reason: ProxyAuthFailure): void;
}

export function createEdgeProxyMetrics(registry: Registry): EdgeProxyMetrics {
  const requests = new Counter({ name: "byok_edge_requests_total", help: "Requests on intercepted connections, by route class (byok or passthrough).", labelNames: ["route_class"], registers: [registry] });
  const authFailures = new Counter({ name: "byok_edge_proxy_auth_failures_total", help: "CONNECTs refused for their gateway key, by reason.", labelNames: ["reason"], registers: [registry] });
  for (const routeClass of ["byok", "passthrough"] satisfies RouteClass[]) requests.inc({ route_class: routeClass }, 0);
  for (const reason of ["missing", "rejected", "unavailable"] satisfies ProxyAuthFailure[]) authFailures.inc({ reason }, 0);
  return {
    request(routeClass) {
      requests.inc({ route_class: routeClass });
    },
    authFailed(reason) {
      authFailures.inc({ reason });
    },
  };
}
