/**
 * The admin HTTP API: method + path -> admin action (actions/admin-actions.ts),
 * with the action's input built from the path parameters, the query string
 * (GET) or the JSON body (everything else). Answers are the action's JSON.
 */
import type { AdminActionKey } from "../actions/admin-actions.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface ApiRoute {
  readonly method: HttpMethod;
  /** `/api/...` with `:name` segments. */
  readonly path: string;
  readonly action: AdminActionKey;
  /** Input of the action from path params, query and body (default: body for writes, query for GET, params on top). */
  readonly input?: (request: { params: Record<string, string>; query: URLSearchParams; body: unknown }) => unknown;
}

const flag = (query: URLSearchParams, name: string): boolean => query.get(name) === "1" || query.get(name) === "true";
const text = (query: URLSearchParams, name: string): string => query.get(name) ?? "";

export const API_ROUTES: readonly ApiRoute[] = [
  { method: "GET", path: "/api/members", action: "listMembers", input: ({ query }) => ({ includeRevoked: flag(query, "all"), teamId: text(query, "team") }) },
  { method: "POST", path: "/api/members", action: "createMember" },
  { method: "POST", path: "/api/members/:memberId/revoke", action: "revokeMember" },
  { method: "PUT", path: "/api/members/:memberId/team", action: "setMemberTeam" },
  { method: "GET", path: "/api/members/:memberId/keys", action: "listKeys", input: ({ params, query }) => ({ memberId: params["memberId"], includeInactive: flag(query, "all") }) },
  { method: "POST", path: "/api/members/:memberId/keys", action: "createKey" },
  { method: "GET", path: "/api/members/:memberId/limits", action: "getLimits" },
  { method: "PUT", path: "/api/members/:memberId/limits", action: "setLimits" },
  { method: "POST", path: "/api/keys/:keyId/revoke", action: "revokeKey" },
  { method: "POST", path: "/api/keys/:keyId/rotate", action: "rotateKey" },
  { method: "GET", path: "/api/teams", action: "listTeams" },
  { method: "POST", path: "/api/teams", action: "createTeam" },
  { method: "PUT", path: "/api/teams/:teamId", action: "updateTeam" },
  { method: "DELETE", path: "/api/teams/:teamId", action: "deleteTeam" },
  { method: "GET", path: "/api/budgets", action: "listBudgets", input: ({ query }) => ({ memberId: text(query, "member"), teamId: text(query, "team") }) },
  { method: "PUT", path: "/api/budgets", action: "setBudget" },
  { method: "DELETE", path: "/api/budgets/:budgetId", action: "deleteBudget" },
  {
    method: "GET",
    path: "/api/usage",
    action: "memberUsage",
    input: ({ query }) => ({ memberId: text(query, "member"), since: text(query, "since"), until: text(query, "until") }),
  },
  {
    method: "GET",
    path: "/api/usage/cache",
    action: "cacheUsage",
    input: ({ query }) => ({ memberId: text(query, "member"), since: text(query, "since"), until: text(query, "until"), conversations: text(query, "conversations") }),
  },
  {
    method: "GET",
    path: "/api/runs",
    action: "recentRuns",
    input: ({ query }) => ({
      limit: text(query, "limit"),
      memberId: text(query, "member"),
      teamId: text(query, "team"),
      before: text(query, "before"),
      running: flag(query, "running"),
    }),
  },
  {
    method: "GET",
    path: "/api/spend",
    action: "spendSeries",
    input: ({ query }) => ({
      group: query.get("group") ?? undefined,
      bucket: query.get("bucket") ?? undefined,
      since: text(query, "since"),
      until: text(query, "until"),
      memberId: text(query, "member"),
      teamId: text(query, "team"),
      modelId: text(query, "model"),
    }),
  },
  {
    method: "GET",
    path: "/api/ledger",
    action: "listLedger",
    input: ({ query }) => ({ runId: text(query, "run"), memberId: text(query, "member"), since: text(query, "since"), until: text(query, "until"), limit: text(query, "limit") }),
  },
  {
    method: "GET",
    path: "/api/audit",
    action: "listAudit",
    input: ({ query }) => ({
      since: text(query, "since"),
      until: text(query, "until"),
      action: text(query, "action"),
      memberId: text(query, "member"),
      limit: text(query, "limit"),
      beforeId: text(query, "before"),
    }),
  },
  { method: "POST", path: "/api/retention/run", action: "purgeContent" },
];

export interface RouteMatch {
  readonly route: ApiRoute;
  readonly params: Record<string, string>;
}

/** The route for a request; `methodNotAllowed` when the path exists with other methods. */
export function matchRoute(method: string, pathname: string): RouteMatch | { kind: "not_found" } | { kind: "method_not_allowed"; allow: string[] } {
  const segments = pathname.split("/");
  const allow: string[] = [];
  for (const route of API_ROUTES) {
    const pattern = route.path.split("/");
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((part, i) => {
      const segment = segments[i]!;
      if (part.startsWith(":")) {
        if (segment === "") return false;
        try {
          params[part.slice(1)] = decodeURIComponent(segment);
        } catch {
          return false;
        }
        return true;
      }
      return part === segment;
    });
    if (!matches) continue;
    if (route.method === method) return { route, params };
    allow.push(route.method);
  }
  return allow.length > 0 ? { kind: "method_not_allowed", allow } : { kind: "not_found" };
}

/** The action input of a matched request. */
export function routeInput(match: RouteMatch, query: URLSearchParams, body: unknown): unknown {
  const { route, params } = match;
  if (route.input) return route.input({ params, query, body });
  const base = route.method === "GET" ? Object.fromEntries(query) : body !== null && typeof body === "object" ? (body as Record<string, unknown>) : {};
  return { ...base, ...params };
}
