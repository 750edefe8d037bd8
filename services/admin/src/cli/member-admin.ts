/**
 * What the admin commands need from the store: its member operations, through
 * the shared store client (@byok/store-client). A failed call throws
 * StoreFailure (`not_found`, `unavailable`, ...).
 */
import type { BusNames } from "@byok/contracts";
import type { NatsConnection } from "@byok/platform";
import { StoreClient } from "@byok/store-client";

export type MemberAdmin = Pick<StoreClient, "createMember" | "revokeMember" | "listMembers" | "memberUsage" | "cacheUsage">;

export function storeMemberAdmin(nc: NatsConnection, names: BusNames, timeoutMs: number): MemberAdmin {
  return new StoreClient(nc, names, { timeoutMs });
}
