/**
 * The admin HTTP server: the login page, the admin page and its assets, and
 * the JSON API under /api/ (api-routes.ts), all behind the admin token
 * (admin-auth.ts).
 *
 *   GET  /login            the login form (public)
 *   POST /login            {token} (form or JSON): sets the session cookie, 303 to /
 *   POST /logout           clears the cookie (CSRF-checked)
 *   GET  /                 the admin page (303 to /login without a session)
 *   GET  /assets/...       the page's scripts, styles and Chart.js (public: no data in them)
 *   GET  /api/session      {csrfToken, expiresAt} for the page
 *   *    /api/...          the admin actions (bearer token or session; writes need x-csrf-token with a session)
 *
 * Writes must be JSON (`content-type: application/json`), so a cross-site
 * HTML form cannot even reach an action; a request whose Origin is not this
 * host is refused. Every answer carries a strict Content-Security-Policy.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { closeOnce, listen, urlHost, type Logger } from "@byok/platform";
import { runAction, type AdminStore } from "../actions/admin-actions.ts";
import type { AdminMetrics } from "../metrics.ts";
import { AdminAuth, CSRF_HEADER, type AdminCredential } from "./admin-auth.ts";
import { apiFailureOf, failureBody, RequestError } from "./api-failures.ts";
import { matchRoute, routeInput } from "./api-routes.ts";
import type { PageAssets } from "./static-assets.ts";

const MAX_BODY_BYTES = 64 * 1024;

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on form posts, which the origin check refuses.
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

export interface AdminServerOptions {
  readonly host: string;
  readonly port: number;
  readonly auth: AdminAuth;
  readonly store: AdminStore;
  readonly assets: PageAssets;
  readonly metrics: AdminMetrics;
  readonly log: Logger;
}

export interface AdminServer {
  /** http://host:port */
  readonly url: string;
  stop(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RequestError(413, "too_large", `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function isJson(req: IncomingMessage): boolean {
  return (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "application/json";
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  if (text.trim() === "") return {};
  if (!isJson(req)) throw new RequestError(415, "unsupported_media_type", "send the body as application/json");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RequestError(400, "invalid", "the body is not valid JSON");
  }
}

function jsonToken(text: string): string {
  try {
    const parsed = JSON.parse(text) as { token?: unknown };
    return typeof parsed.token === "string" ? parsed.token : "";
  } catch {
    return "";
  }
}

/** A browser's Origin (when it sends one) must be this server's own. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origin === "") return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function send(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string>): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  send(res, status, body, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
}

function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  send(res, 303, "", { location, "cache-control": "no-store", ...headers });
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const { auth, assets, metrics, log } = options;

  const credentialOf = (req: IncomingMessage): AdminCredential => auth.credentialOf({ authorization: req.headers.authorization, cookie: req.headers.cookie });

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!sameOrigin(req)) throw new RequestError(403, "forbidden_origin", "cross-origin login refused");
    const text = await readBody(req);
    const token = isJson(req) ? jsonToken(text) : (new URLSearchParams(text).get("token") ?? "");
    if (!auth.tokenMatches(token.trim())) {
      metrics.login("refused");
      log.warn("admin login with a wrong token");
      redirect(res, "/login?failed=1");
      return;
    }
    metrics.login("ok");
    log.info("admin logged in");
    redirect(res, "/", { "set-cookie": auth.setCookieHeader(auth.newSession()) });
  }

  /** Authentication and CSRF for /api and /logout; returns the credential or throws RequestError. */
  function authorize(req: IncomingMessage, mutating: boolean): AdminCredential {
    const credential = credentialOf(req);
    if (credential.kind === "none") {
      throw new RequestError(401, "unauthorized", credential.reason === "expired" ? "the session expired: log in again" : "the admin token is required (Authorization: Bearer <token>, or log in)");
    }
    if (!sameOrigin(req)) throw new RequestError(403, "forbidden_origin", "cross-origin request refused");
    if (mutating && credential.kind === "session") {
      const header = req.headers[CSRF_HEADER];
      if (!auth.csrfMatches(credential.cookie, typeof header === "string" ? header : undefined)) throw new RequestError(403, "csrf", `missing or wrong ${CSRF_HEADER} header`);
    }
    return credential;
  }

  async function api(req: IncomingMessage, res: ServerResponse, url: URL): Promise<string> {
    const method = req.method ?? "GET";
    if (url.pathname === "/api/session" && method === "GET") {
      const credential = authorize(req, false);
      const body =
        credential.kind === "session"
          ? { kind: "session", csrfToken: auth.csrfToken(credential.cookie), expiresAt: new Date(credential.issuedAtMs + auth.sessionMs).toISOString() }
          : { kind: "bearer" };
      sendJson(res, 200, JSON.stringify(body));
      return "session";
    }
    const match = matchRoute(method, url.pathname);
    if ("kind" in match) {
      authorize(req, false);
      if (match.kind === "method_not_allowed") throw new RequestError(405, "method_not_allowed", `use ${match.allow.join(" or ")}`);
      throw new RequestError(404, "not_found_route", `no API route ${method} ${url.pathname}`);
    }
    authorize(req, method !== "GET");
    const body = method === "GET" ? {} : await readJson(req);
    const result = await runAction(match.route.action, options.store, routeInput(match, url.searchParams, body));
    sendJson(res, 200, JSON.stringify(result));
    return match.route.action;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const url = new URL(req.url ?? "/", "http://admin.invalid");
    const method = req.method ?? "GET";
    if (url.pathname.startsWith("/api/")) return api(req, res, url);
    if (url.pathname === "/login" && method === "POST") {
      await login(req, res);
      return "login";
    }
    if (url.pathname === "/logout" && method === "POST") {
      authorize(req, true);
      redirect(res, "/login", { "set-cookie": auth.setCookieHeader(undefined) });
      return "logout";
    }
    if (method !== "GET" && method !== "HEAD") throw new RequestError(405, "method_not_allowed", "use GET");
    if (url.pathname === "/login") {
      send(res, 200, assets.login.body, { "content-type": assets.login.contentType, "cache-control": "no-store" });
      return "page";
    }
    if (url.pathname === "/") {
      if (credentialOf(req).kind !== "session") {
        redirect(res, "/login");
        return "page";
      }
      send(res, 200, assets.index.body, { "content-type": assets.index.contentType, "cache-control": "no-store" });
      return "page";
    }
    if (url.pathname.startsWith("/assets/")) {
      const asset = assets.files.get(url.pathname.slice("/assets/".length));
      if (asset) {
        send(res, 200, asset.body, { "content-type": asset.contentType, "cache-control": "no-cache" });
        return "asset";
      }
    }
    if (url.pathname === "/healthz") {
      send(res, 200, "ok\n", { "content-type": "text/plain" });
      return "health";
    }
    send(res, 404, "not found\n", { "content-type": "text/plain" });
    return "not_found";
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    handle(req, res).then(
      (route) => metrics.request(route, res.statusCode, started),
      (error: unknown) => {
        const failure = apiFailureOf(error);
        if (failure.unexpected) log.error({ err: error, method: req.method, path: (req.url ?? "").split("?")[0] }, "admin request failed");
        if (!res.headersSent) sendJson(res, failure.status, failureBody(failure));
        else res.destroy();
        metrics.request("error", failure.status, started);
      },
    );
  });
  const port = await listen(server, options.port, options.host);
  return { url: `http://${urlHost(options.host)}:${port}`, stop: closeOnce(server) };
}
