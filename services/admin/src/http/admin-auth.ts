/**
 * Who may use the admin page and API: the holder of the admin token, and
 * nobody else (member keys are never accepted here).
 *
 * - Scripts send `Authorization: Bearer <admin token>`.
 * - The page logs in once with the token (POST /login) and then carries a
 *   session cookie: `v1.<issued ms>.<nonce>.<mac>`, an HMAC under a key
 *   derived from the token, HttpOnly and SameSite=Strict. It holds no
 *   secret itself, and a new admin token ends every session.
 * - Mutating calls made with the cookie also need the session's CSRF token in
 *   the `x-csrf-token` header (an HMAC of the cookie, which the page reads
 *   from GET /api/session); a bearer call needs none, because a browser never
 *   adds that header by itself.
 * Every comparison of secrets is constant-time (HMAC digests of equal length
 * through timingSafeEqual).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const SESSION_COOKIE = "byok_admin_session";
export const CSRF_HEADER = "x-csrf-token";

/** How a request proved that it comes from the admin. */
export type AdminCredential =
  | { kind: "bearer" }
  | { kind: "session"; cookie: string; issuedAtMs: number }
  | { kind: "none"; reason: "missing" | "invalid" | "expired" };

export interface AdminAuthOptions {
  readonly token: string;
  readonly sessionMs: number;
  readonly cookieSecure: boolean;
  readonly now?: () => number;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Constant-time equality of two strings of any length (compares their SHA-256 digests). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

export class AdminAuth {
  readonly #token: string;
  readonly #key: Buffer;
  readonly #sessionMs: number;
  readonly #secure: boolean;
  readonly #now: () => number;

  constructor(options: AdminAuthOptions) {
    this.#token = options.token;
    this.#key = createHmac("sha256", options.token).update("byok-admin-session-v1").digest();
    this.#sessionMs = options.sessionMs;
    this.#secure = options.cookieSecure;
    this.#now = options.now ?? Date.now;
  }

  /** How long a session lasts (ms). */
  get sessionMs(): number {
    return this.#sessionMs;
  }

  /** Whether `candidate` is the admin token. */
  tokenMatches(candidate: string): boolean {
    return secretsEqual(candidate, this.#token);
  }

  #mac(text: string): string {
    return createHmac("sha256", this.#key).update(text).digest("base64url");
  }

  /** A new session cookie value (after a successful login). */
  newSession(): string {
    const body = `v1.${this.#now()}.${randomBytes(12).toString("base64url")}`;
    return `${body}.${this.#mac(body)}`;
  }

  /** Set-Cookie for a session value; `undefined` clears the cookie (logout). */
  setCookieHeader(value: string | undefined): string {
    const attributes = ["Path=/", "HttpOnly", "SameSite=Strict", ...(this.#secure ? ["Secure"] : [])];
    if (value === undefined) return [`${SESSION_COOKIE}=`, "Max-Age=0", ...attributes].join("; ");
    return [`${SESSION_COOKIE}=${value}`, `Max-Age=${Math.floor(this.#sessionMs / 1000)}`, ...attributes].join("; ");
  }

  /** The CSRF token of a session (what the page must echo in x-csrf-token). */
  csrfToken(cookie: string): string {
    return this.#mac(`csrf.${cookie}`);
  }

  csrfMatches(cookie: string, header: string | undefined): boolean {
    return header !== undefined && secretsEqual(header, this.csrfToken(cookie));
  }

  #session(value: string): AdminCredential {
    const parts = value.split(".");
    if (parts.length !== 4 || parts[0] !== "v1") return { kind: "none", reason: "invalid" };
    const body = parts.slice(0, 3).join(".");
    if (!secretsEqual(parts[3]!, this.#mac(body))) return { kind: "none", reason: "invalid" };
    const issuedAtMs = Number(parts[1]);
    const age = this.#now() - issuedAtMs;
    if (!Number.isSafeInteger(issuedAtMs) || age < -60_000 || age > this.#sessionMs) return { kind: "none", reason: "expired" };
    return { kind: "session", cookie: value, issuedAtMs };
  }

  /** The credential of a request from its Authorization and Cookie headers (a bearer token wins). */
  credentialOf(headers: { authorization?: string | undefined; cookie?: string | undefined }): AdminCredential {
    const authorization = headers.authorization;
    if (authorization !== undefined && authorization !== "") {
      const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
      return match && this.tokenMatches(match[1]!) ? { kind: "bearer" } : { kind: "none", reason: "invalid" };
    }
    const cookie = parseCookies(headers.cookie).get(SESSION_COOKIE);
    if (cookie === undefined || cookie === "") return { kind: "none", reason: "missing" };
    return this.#session(cookie);
  }
}
