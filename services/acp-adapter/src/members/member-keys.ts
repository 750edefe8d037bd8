/**
 * Member keys of bridge links, checked through the store
 * (@byok/store-client lookupMemberKey), with a found key remembered for
 * MEMBER_CACHE_MS so a reconnecting bridge does not wait for the store each
 * time. Unknown keys and an unavailable store are not remembered: a key
 * created a moment ago works at once, and a store that is back is asked again.
 */
import { lookupMemberKey, type MemberKeyLookup, type StoreClient } from "@byok/store-client";

export type VerifyMemberKey = (key: string) => Promise<MemberKeyLookup>;

export function cachedMemberKeys(store: Pick<StoreClient, "verifyMemberKey">, cacheMs: number, now: () => number = Date.now): VerifyMemberKey {
  const cache = new Map<string, { readonly lookup: MemberKeyLookup; readonly until: number }>();
  return async (key) => {
    const hit = cache.get(key);
    if (hit !== undefined && hit.until > now()) return hit.lookup;
    cache.delete(key);
    const lookup = await lookupMemberKey(store, key);
    if (lookup.kind === "member") cache.set(key, { lookup, until: now() + cacheMs });
    return lookup;
  };
}
