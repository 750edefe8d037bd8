/**
 * Member keys live in the store (member.create / revoke / verify / list /
 * usage), reached through the shared store client (@byok/store-client). The
 * proxy needs one thing of it, verifying keys: MemberDirectory, with the
 * store's answers mapped into lookups. (Creating, revoking and listing members
 * is the admin CLI's: services/admin.)
 */
import { lookupMemberKey, type StoreClient } from "@byok/store-client";

export type MemberLookup = { kind: "member"; memberId: string } | { kind: "unknown" } | { kind: "unavailable"; message: string };

/** What the proxy needs to authenticate members. */
export interface MemberDirectory {
  verifyKey(key: string): Promise<MemberLookup>;
}

/** Key verification on member.verify: an unknown or revoked key is `unknown`; any other failure `unavailable`. */
export function memberDirectory(store: Pick<StoreClient, "verifyMemberKey">): MemberDirectory {
  return { verifyKey: (key) => lookupMemberKey(store, key) };
}
