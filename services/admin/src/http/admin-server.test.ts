/**
 * The admin HTTP server over real loopback HTTP, with an in-memory store:
 * who gets in (token, session, CSRF, origin), what the API answers, and how
 * store failures come out. The real store is used in tests/admin-page.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger, Registry } from "@byok/platform";
import { StoreFailure } from "@byok/store-client";
import type { AdminStore } from "../actions/admin-actions.ts";
import { createAdminMetrics } from "../metrics.ts";
import { AdminAuth } from "./admin-auth.ts";
import { startAdminServer, type AdminServer } from "./admin-server.ts";
import { memoryMembers } from "../testing/admin-cli.ts";
import { loadPageAssets } from "./static-assets.ts";

const TOKEN = "server-test-admin-token-0123456789";

function memoryStore(): AdminStore {
  return {
    ...memoryMembers(),
    async memberUsage() {
      throw new StoreFailure("unavailable", "member.usage", "no_responders: no store is listening");
    },
  } as unknown as AdminStore;
}

let server: AdminServer;
let registry: Registry;

beforeAll(async () => {
  registry = new Registry();
  server = await startAdminServer({
    host: "127.0.0.1",
    port: 0,
    auth: new AdminAuth({ token: TOKEN, sessionMs: 3_600_000, cookieSecure: false }),
    store: memoryStore(),
    assets: loadPageAssets(),
    metrics: createAdminMetrics(registry),
    log: silentLogger(),
  });
});
afterAll(() => server?.stop());

const bearer = { authorization: `Bearer ${TOKEN}` };

async function login(token = TOKEN): Promise<Response> {
  return fetch(`${server.url}/login`, { method: "POST", body: new URLSearchParams({ token }), redirect: "manual" });
}

async function session(): Promise<{ cookie: string; csrf: string }> {
  const response = await login();
  const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0]!;
  const info = (await (await fetch(`${server.url}/api/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  return { cookie, csrf: info.csrfToken };
}

describe("admin server", () => {
  it("sends the page only after login; a wrong token goes back to the login page", async () => {
    const page = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/login");
    const refused = await login("wrong-token");
    expect(refused.headers.get("location")).toBe("/login?failed=1");
    expect(refused.headers.get("set-cookie")).toBeNull();
    const { cookie } = await session();
    const index = await fetch(`${server.url}/`, { headers: { cookie } });
    expect(index.status).toBe(200);
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await index.text()).toContain("/assets/vendor/chart.umd.min.js");
    const chart = await fetch(`${server.url}/assets/vendor/chart.umd.min.js`);
    expect(chart.status).toBe(200);
    expect((await chart.text()).length).toBeGreaterThan(100_000);
  });

  it("answers the API only to the admin token or a session", async () => {
    expect((await fetch(`${server.url}/api/members`)).status).toBe(401);
    expect((await fetch(`${server.url}/api/members`, { headers: { authorization: "Bearer member-key-of-alice" } })).status).toBe(401);
    const created = await fetch(`${server.url}/api/members`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ name: "alice" }) });
    expect(created.status).toBe(200);
    expect(await created.json()).toMatchObject({ member: { name: "alice" }, key: expect.any(String) });
    const list = (await (await fetch(`${server.url}/api/members`, { headers: bearer })).json()) as { members: Array<{ name: string }> };
    expect(list.members.map((m) => m.name)).toContain("alice");
  });

  it("refuses a write with the session cookie but without its CSRF token, or from another origin", async () => {
    const { cookie, csrf } = await session();
    const write = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/members`, { method: "POST", headers: { cookie, "content-type": "application/json", ...headers }, body: JSON.stringify({ name: "bob" }) });
    const noCsrf = await write({});
    expect(noCsrf.status).toBe(403);
    expect(await noCsrf.json()).toMatchObject({ error: { kind: "csrf" } });
    expect((await write({ "x-csrf-token": csrf, origin: "https://evil.example" })).status).toBe(403);
    expect((await write({ "x-csrf-token": csrf })).status).toBe(200);
    // A form post (what a cross-site page could send) never reaches an action.
    const form = await fetch(`${server.url}/api/members`, { method: "POST", headers: { ...bearer, "content-type": "application/x-www-form-urlencoded" }, body: "name=eve" });
    expect(form.status).toBe(415);
  });

  it("maps bad input and store failures to HTTP statuses with a kind", async () => {
    const empty = await fetch(`${server.url}/api/members`, { method: "POST", headers: { ...bearer, "content-type": "application/json" }, body: JSON.stringify({ name: " " }) });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: { kind: "invalid", message: "name: name is required" } });
    const missing = await fetch(`${server.url}/api/members/m404/revoke`, { method: "POST", headers: bearer });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { kind: "not_found", message: "no member m404" } });
    const down = await fetch(`${server.url}/api/usage`, { headers: bearer });
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: { kind: string } }).error.kind).toBe("unavailable");
    expect((await fetch(`${server.url}/api/nothing`, { headers: bearer })).status).toBe(404);
    expect((await fetch(`${server.url}/api/members`, { method: "DELETE", headers: bearer })).status).toBe(405);
  });

  it("counts requests by route and status", async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/byok_admin_http_requests_total\{route="createMember",status="200"\} [1-9]/);
    expect(text).toMatch(/byok_admin_logins_total\{outcome="refused"\} 1/);
  });
});
