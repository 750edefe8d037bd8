/**
 * Member keys for the HTTP front: the key a client sends (Authorization:
 * Bearer, or x-api-key) is verified by the store's member.verify operation
 * over the bus, the same check the edge proxy makes for Cursor. A verified key
 * is remembered for `cacheMs` (by its SHA-256, never the key itself), so the
 * hot path does not ask the store on every request: a revoked key stops
 * working after at most that long. Unknown keys are never remembered.
 *
 * `MemberKeys` is the seam: swap `storeMemberKeys` for the shared store
 * client's verify once that exists.
 */
import { createHash } from "node:crypto";
import { STORE_OPERATIONS, StoreErrorKind, type BusNames } from "@byok/contracts";
import { BusError, busRequest, type NatsConnection } from "@byok/platform";

export type MemberLookup = { readonly kind: "member"; readonly memberId: string } | { readonly kind: "unknown" } | { readonly kind: "unavailable"; readonly message: string };

export interface MemberKeys {
  verify(key: string): Promise<MemberLookup>;
}

/** member.verify over the bus. */
export function storeMemberKeys(nc: NatsConnection, names: BusNames, timeoutMs: number): MemberKeys {
  const op = STORE_OPERATIONS.verifyMemberKey;
  return {
    async verify(key) {
      let reply;
      try {
        reply = await busRequest(nc, names.store(op.name), op.request, { key }, op.response, { timeoutMs });
      } catch (error) {
        if (error instanceof BusError) return { kind: "unavailable", message: `store ${error.kind}: ${error.message}` };
        throw error;
      }
      if (reply.error !== undefined) {
        return reply.error.kind === StoreErrorKind.NOT_FOUND ? { kind: "unknown" } : { kind: "unavailable", message: `store: ${reply.error.message || StoreErrorKind[reply.error.kind]}` };
      }
      return reply.memberId !== "" ? { kind: "member", memberId: reply.memberId } : { kind: "unavailable", message: "store: member.verify returned no member id" };
    },
  };
}

/** Remembers verified keys for `cacheMs`; `now` is injectable for tests. */
export function cachedMemberKeys(inner: MemberKeys, cacheMs: number, now: () => number = Date.now): MemberKeys {
  const verified = new Map<string, { memberId: string; until: number }>();
  const MAX_ENTRIES = 10_000;
  return {
    async verify(key) {
      const digest = createHash("sha256").update(key).digest("hex");
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
