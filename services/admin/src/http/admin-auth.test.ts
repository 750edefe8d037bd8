import { describe, expect, it } from "vitest";
import { AdminAuth, SESSION_COOKIE } from "./admin-auth.ts";

const TOKEN = "admin-token-for-tests-0123456789";

function auth(now = () => 1_000_000, token = TOKEN): AdminAuth {
  return new AdminAuth({ token, sessionMs: 60_000, cookieSecure: false, now });
}

const cookie = (value: string) => `other=1; ${SESSION_COOKIE}=${value}`;

describe("admin authentication", () => {
  it("accepts the admin token as a bearer token and nothing else", () => {
    const a = auth();
    expect(a.credentialOf({ authorization: `Bearer ${TOKEN}` })).toEqual({ kind: "bearer" });
    expect(a.credentialOf({ authorization: `Bearer ${TOKEN}x` })).toEqual({ kind: "none", reason: "invalid" });
    expect(a.credentialOf({ authorization: `Basic ${TOKEN}` })).toEqual({ kind: "none", reason: "invalid" });
    expect(a.credentialOf({})).toEqual({ kind: "none", reason: "missing" });
  });

  it("a session cookie works until it expires, and a forged or re-keyed one never", () => {
    let now = 1_000_000;
    const a = auth(() => now);
    const session = a.newSession();
    expect(a.credentialOf({ cookie: cookie(session) })).toMatchObject({ kind: "session", cookie: session });
    const [v, issued, nonce] = session.split(".");
    expect(a.credentialOf({ cookie: cookie(`${v}.${Number(issued) + 1}.${nonce}.${session.split(".")[3]}`) })).toEqual({ kind: "none", reason: "invalid" });
    expect(auth(() => now, `${TOKEN}-rotated`).credentialOf({ cookie: cookie(session) })).toEqual({ kind: "none", reason: "invalid" });
    now += 60_001;
    expect(a.credentialOf({ cookie: cookie(session) })).toEqual({ kind: "none", reason: "expired" });
  });

  it("the CSRF token belongs to one session", () => {
    const a = auth();
    const one = a.newSession();
    const two = a.newSession();
    expect(a.csrfMatches(one, a.csrfToken(one))).toBe(true);
    expect(a.csrfMatches(one, a.csrfToken(two))).toBe(false);
    expect(a.csrfMatches(one, undefined)).toBe(false);
  });

  it("the cookie is HttpOnly and SameSite=Strict, and logout clears it", () => {
    const a = auth();
    expect(a.setCookieHeader("v")).toBe(`${SESSION_COOKIE}=v; Max-Age=60; Path=/; HttpOnly; SameSite=Strict`);
    expect(a.setCookieHeader(undefined)).toMatch(/^byok_admin_session=; Max-Age=0; .*HttpOnly/);
  });
});
