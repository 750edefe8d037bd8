/**
 * Proxy authentication: every CONNECT carries the member's gateway key, either
 * as `Proxy-Authorization: Basic base64(name:key)` (what clients send for
 * `http://name:key@host:port` proxy URLs; a key in the user part alone works
 * too) or `Proxy-Authorization: Bearer key`. Keys are checked against the
 * store and cached briefly (by SHA-256, never the key itself), so a revoked key
 * stops working within MEMBER_CACHE_MS.
 */
import { hash } from "node:crypto";
import type { MemberDirectory } from "./member-store.ts";

export type ProxyAuthResult =
  | { kind: "ok"; memberId: string }
  | { kind: "missing" }
  | { kind: "rejected" }
  | { kind: "unavailable"; message: string };

const NEGATIVE_CACHE_MS = 5_000;
const MAX_CACHE_ENTRIES = 10_000;

/** The gateway key carried by a Proxy-Authorization header, if any. */
export function keyFromProxyAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(header);
  if (!match) return undefined;
  const scheme = (match[1] ?? "").toLowerCase();
  const credentials = match[2] ?? "";
  if (scheme === "bearer") return credentials;
  if (scheme !== "basic") return undefined;
  const decoded = Buffer.from(credentials, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const password = colon < 0 ? "" : decoded.slice(colon + 1);
  const key = password.length > 0 ? password : user;
  return key.length > 0 ? decodeURIComponentSafe(key) : undefined;
}

/** Clients may send the URL-encoded userinfo of the proxy URL verbatim. */
function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

interface CacheEntry {
  memberId: string | undefined;
  expiresAt: number;
}

export class MemberAuthenticator {
  readonly #directory: MemberDirectory;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(directory: MemberDirectory, options: { cacheMs: number }) {
    this.#directory = directory;
    this.#cacheMs = options.cacheMs;
  }

  async authenticate(proxyAuthorization: string | undefined, now = Date.now()): Promise<ProxyAuthResult> {
    const key = keyFromProxyAuthorization(proxyAuthorization);
    if (key === undefined) return { kind: "missing" };
    const digest = hash("sha256", key, "hex");
    const cached = this.#cache.get(digest);
    if (cached && cached.expiresAt > now) return cached.memberId === undefined ? { kind: "rejected" } : { kind: "ok", memberId: cached.memberId };
    const lookup = await this.#directory.verifyKey(key);
    switch (lookup.kind) {
      case "member":
        this.#remember(digest, { memberId: lookup.memberId, expiresAt: now + this.#cacheMs });
        return { kind: "ok", memberId: lookup.memberId };
      case "unknown":
        this.#remember(digest, { memberId: undefined, expiresAt: now + Math.min(NEGATIVE_CACHE_MS, this.#cacheMs) });
        return { kind: "rejected" };
      case "unavailable":
        return { kind: "unavailable", message: lookup.message };
      default: {
        const never: never = lookup;
        throw new Error(`unexpected lookup ${JSON.stringify(never)}`);
      }
    }
  }

  #remember(digest: string, entry: CacheEntry): void {
    this.#cache.delete(digest);
    this.#cache.set(digest, entry);
    while (this.#cache.size > MAX_CACHE_ENTRIES) {
      const oldest = this.#cache.keys().next().value;
      if (oldest === undefined) break;
      this.#cache.delete(oldest);
    }
  }
}
