/**
 * Member keys live in the store (member.create / revoke / verify / list / usage
 * over NATS request/reply). This is the proxy's only client for them: the proxy
 * verifies keys, the admin command creates, revokes and lists members and reports
 * their usage. Store and bus errors are mapped here into outcomes.
 */
import { STORE_OPERATIONS, StoreErrorKind, type BusNames, type MemberRecord, type MemberUsage, type StoreError } from "@byok/contracts";
import { BusError, busRequest, type NatsConnection } from "@byok/platform";

export type MemberLookup = { kind: "member"; memberId: string } | { kind: "unknown" } | { kind: "unavailable"; message: string };

/** What the proxy needs to authenticate members. */
export interface MemberDirectory {
  verifyKey(key: string): Promise<MemberLookup>;
}

export type StoreCallOutcome<T> = { kind: "ok"; value: T } | { kind: "not_found"; message: string } | { kind: "failed"; message: string };

export interface MemberStoreClient extends MemberDirectory {
  create(name: string): Promise<StoreCallOutcome<{ member: MemberRecord; key: string }>>;
  revoke(memberId: string): Promise<StoreCallOutcome<MemberRecord>>;
  list(includeRevoked: boolean): Promise<StoreCallOutcome<MemberRecord[]>>;
  usage(filter: UsageFilter): Promise<StoreCallOutcome<MemberUsage[]>>;
}

/** member.usage filter: "" = every member / unbounded; since and until are RFC 3339. */
export interface UsageFilter {
  readonly memberId: string;
  readonly since: string;
  readonly until: string;
}

function storeFailure(error: StoreError): { kind: "not_found"; message: string } | { kind: "failed"; message: string } {
  const message = error.message || StoreErrorKind[error.kind];
  return error.kind === StoreErrorKind.NOT_FOUND ? { kind: "not_found", message } : { kind: "failed", message: `store: ${message}` };
}

async function call<T>(request: () => Promise<T>): Promise<{ kind: "reply"; reply: T } | { kind: "failed"; message: string }> {
  try {
    return { kind: "reply", reply: await request() };
  } catch (error) {
    if (error instanceof BusError) return { kind: "failed", message: `${error.kind}: ${error.message}` };
    throw error;
  }
}

export function memberStoreClient(nc: NatsConnection, names: BusNames, timeoutMs: number): MemberStoreClient {
  const ops = STORE_OPERATIONS;
  return {
    async verifyKey(key) {
      const op = ops.verifyMemberKey;
      const r = await call(() => busRequest(nc, names.store(op.name), op.request, { key }, op.response, { timeoutMs }));
      if (r.kind === "failed") return { kind: "unavailable", message: r.message };
      if (r.reply.error) {
        const failure = storeFailure(r.reply.error);
        return failure.kind === "not_found" ? { kind: "unknown" } : { kind: "unavailable", message: failure.message };
      }
      return r.reply.memberId ? { kind: "member", memberId: r.reply.memberId } : { kind: "unavailable", message: "store: member.verify returned no member id" };
    },
    async create(name) {
      const op = ops.createMember;
      const r = await call(() => busRequest(nc, names.store(op.name), op.request, { name }, op.response, { timeoutMs }));
      if (r.kind === "failed") return r;
      if (r.reply.error) return storeFailure(r.reply.error);
      if (!r.reply.member || !r.reply.key) return { kind: "failed", message: "store: member.create returned no member or key" };
      return { kind: "ok", value: { member: r.reply.member, key: r.reply.key } };
    },
    async revoke(memberId) {
      const op = ops.revokeMember;
      const r = await call(() => busRequest(nc, names.store(op.name), op.request, { memberId }, op.response, { timeoutMs }));
      if (r.kind === "failed") return r;
      if (r.reply.error) return storeFailure(r.reply.error);
      if (!r.reply.member) return { kind: "failed", message: "store: member.revoke returned no member" };
      return { kind: "ok", value: r.reply.member };
    },
    async list(includeRevoked) {
      const op = ops.listMembers;
      const r = await call(() => busRequest(nc, names.store(op.name), op.request, { includeRevoked }, op.response, { timeoutMs }));
      if (r.kind === "failed") return r;
      if (r.reply.error) return storeFailure(r.reply.error);
      return { kind: "ok", value: r.reply.members };
    },
    async usage(filter) {
      const op = ops.memberUsage;
      const r = await call(() => busRequest(nc, names.store(op.name), op.request, { ...filter }, op.response, { timeoutMs }));
      if (r.kind === "failed") return r;
      if (r.reply.error) return storeFailure(r.reply.error);
      return { kind: "ok", value: r.reply.members };
    },
  };
}
