/**
 * The admin service's series (on its own registry, served by its ops
 * listener; see packages/platform/src/metrics.ts and docs/metrics.md):
 *
 *   byok_admin_http_requests_total{route, status}          counter
 *     Requests answered; `route` is the admin action (member.create, ...),
 *     or page / asset / login / logout / session / health / not_found / error.
 *   byok_admin_http_request_duration_seconds{route}        histogram
 *     Time from the request to the end of the answer (store calls included).
 *   byok_admin_logins_total{outcome}                       counter
 *     Logins on the page: ok, refused (wrong token).
 */
import { Counter, Histogram, secondsSince, type Registry } from "@byok/platform";

export interface AdminMetrics {
  request(route: string, status: number, startedMs: number): void;
  login(outcome: "ok" | "refused"): void;
}

export function createAdminMetrics(registry: Registry): AdminMetrics {
  const requests = new Counter({
    name: "byok_admin_http_requests_total",
    help: "Admin page and API requests answered, by route (admin action or page part) and HTTP status.",
    labelNames: ["route", "status"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "byok_admin_http_request_duration_seconds",
    help: "Admin request handling time (store calls included), by route.",
    labelNames: ["route"],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const logins = new Counter({
    name: "byok_admin_logins_total",
    help: "Logins on the admin page, by outcome (ok, refused).",
    labelNames: ["outcome"],
    registers: [registry],
  });
  return {
    request(route, status, startedMs) {
      requests.inc({ route, status: String(status) });
      duration.observe({ route }, secondsSince(startedMs));
    },
    login(outcome) {
      logins.inc({ outcome });
    },
  };
}
