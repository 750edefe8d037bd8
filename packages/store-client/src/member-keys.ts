/**
 * Member key verification as every service that authenticates members needs
 * it (the edge proxy's proxy auth, the ACP adapter's bridge links): the
 * store's member.verify answer mapped to a lookup. An unknown or revoked key
 * is `unknown`; a store that does not answer (or fails) is `unavailable`,
 * which a caller reports as "try again", never as a bad key.
 */
import type { MemberId } from "@byok/contracts";
import type { StoreClient } from "./store-client.ts";
import { StoreFailure } from "./store-failure.ts";

export type MemberKeyLookup =
  | { readonly kind: "member"; readonly memberId: MemberId; readonly name: string }
  | { readonly kind: "unknown" }
  | { readonly kind: "unavailable"; readonly message: string };

export async function lookupMemberKey(store: Pick<StoreClient, "verifyMemberKey">, key: string): Promise<MemberKeyLookup> {
  try {
    const { memberId, name } = await store.verifyMemberKey(key);
    return { kind: "member", memberId, name };
  } catch (error) {
    if (!(error instanceof StoreFailure)) throw error;
    return error.kind === "not_found" ? { kind: "unknown" } : { kind: "unavailable", message: error.message };
  }
}
