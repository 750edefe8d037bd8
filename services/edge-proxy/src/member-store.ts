/**
 * Member keys live in the store (member.create / revoke / verify / list /
 * usage), reached through the shared store client (@byok/store-client). The
 * proxy needs one thing of it, verifying keys: MemberDirectory, with the
 * store's answers mapped into lookups. The admin command uses the client's
 * member operations as they are (MemberStoreClient; failures are StoreFailure).
 */
import type { BusNames } from "@byok/contracts";
import type { NatsConnection } from "@byok/platform";
import { StoreClient, StoreFailure } from "@byok/store-client";

export type MemberLookup = { kind: "member"; memberId: string } | { kind: "unknown" } | { kind: "unavailable"; message: string };

/** What the proxy needs to authenticate members. */
export interface MemberDirectory {
  verifyKey(key: string): Promise<MemberLookup>;
}

/** The store's member operations the admin command uses. */
export type MemberStoreClient = Pick<StoreClient, "createMember" | "revokeMember" | "listMembers" | "memberUsage" | "cacheUsage">;

export function memberStoreClient(nc: NatsConnection, names: BusNames, timeoutMs: number): MemberStoreClient {
  return new StoreClient(nc, names, { timeoutMs });
}

/** Key verification on member.verify: an unknown or revoked key is `unknown`; any other failure `unavailable`. */
export function memberDirectory(store: Pick<StoreClient, "verifyMemberKey">): MemberDirectory {
  return {
    async verifyKey(key) {
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
