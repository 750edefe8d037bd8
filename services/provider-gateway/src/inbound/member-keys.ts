/**
 * Member keys for the HTTP front: the key a client sends (Authorization:
 * Bearer, or x-api-key) is verified by the store's member.verify operation,
 * the same check the edge proxy makes for Cursor. A verified key
 * is remembered for `cacheMs` (by its SHA-256, never the key itself), so the
 * hot path does not ask the store on every request: a revoked key stops
 * working after at most that long. Unknown keys are never remembered.
 *
 * The store is reached through the shared store client (@byok/store-client).
 */
import { hash } from "node:crypto";
import { StoreFailure, type StoreClient } from "@byok/store-client";

export type MemberLookup = { readonly kind: "member"; readonly memberId: string } | { readonly kind: "unknown" } | { readonly kind: "unavailable"; readonly message: string };

export interface MemberKeys {
  verify(key: string): Promise<MemberLookup>;
}

/** member.verify: an unknown or revoked key is `unknown`; any other store failure `unavailable`. */
export function storeMemberKeys(store: Pick<StoreClient, "verifyMemberKey">): MemberKeys {
  return {
    async verify(key) {
      try {
        const { memberId } = await store.verifyMemberKey(key);
        return { kind: "member", memberId };
      } catch (error) {
        if (!(error instanceof StoreFailure)) throw error;
        return error.kind === "not_found" ? { kind: "unknown" } : { kind: "unavailable", message: error.message };
      }
    },
  };
}

/** Remembers verified keys for `cacheMs`; `now` is injectable for tests. */
export function cachedMemberKeys(inner: MemberKeys, cacheMs: number, now: () => number = Date.now): MemberKeys {
  const verified = new Map<string, { memberId: string; until: number }>();
  const MAX_ENTRIES = 10_000;
  return {
    async verify(key) {
      const digest = hash("sha256", key, "hex");
      const hit = verified.get(digest);
      if (hit !== undefined && hit.until > now()) return { kind: "member", memberId: hit.memberId };
      const lookup = await inner.verify(key);
      if (lookup.kind === "member") {
        if (verified.size >= MAX_ENTRIES) verified.delete(verified.keys().next().value as string);
        verified.set(digest, { memberId: lookup.memberId, until: now() + cacheMs });
      } else {
        verified.delete(digest);
      }
      return lookup;
    },
  };
}
