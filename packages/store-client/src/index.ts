/**
 * @byok/store-client: the one client of the store's request/reply API over
 * NATS. Construct a StoreClient per service (connection, bus names, timeout);
 * every call resolves with the store's answer or throws StoreFailure, whose
 * `kind` is all a caller needs to decide what to do.
 */
export { lookupMemberKey } from "./member-keys.ts";
export type { MemberKeyLookup } from "./member-keys.ts";
export { StoreClient } from "./store-client.ts";
export type { AppendedMessages, CompactedHistory, KnownHistory, RevisionHistory } from "./revision-history.ts";
export type {
  BegunRun,
  CacheUsageFilter,
  CreateMemberOptions,
  CreatedMember,
  CreatedMemberKey,
  CreatedToolRound,
  RotatedMemberKey,
  RunSlot,
  SettledCall,
  StoreClientOptions,
  UsageFilter,
  VerifiedMember,
} from "./store-client.ts";
export { StoreFailure, failureKindOfBusError, failureKindOfStoreError } from "./store-failure.ts";
export type { StoreFailureKind } from "./store-failure.ts";
