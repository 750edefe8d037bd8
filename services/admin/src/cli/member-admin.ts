/**
 * What the admin commands need from the store: the member operations, each
 * resolving with the store's answer or throwing an error that carries a
 * `kind` (not_found, unavailable, ...). The shape is the store client's
 * member API, which implements it.
 */
import { STORE_OPERATIONS, StoreErrorKind, type BusNames, type MemberRecord, type MemberUsage, type StoreError } from "@byok/contracts";
import { BusError, busRequest, type NatsConnection } from "@byok/platform";

export interface UsageFilter {
  readonly memberId: string;
  readonly since: string;
  readonly until: string;
}

export interface MemberAdmin {
  createMember(name: string): Promise<{ member: MemberRecord; key: string }>;
  revokeMember(memberId: string): Promise<MemberRecord>;
  listMembers(includeRevoked: boolean): Promise<MemberRecord[]>;
  memberUsage(filter: UsageFilter): Promise<MemberUsage[]>;
}

/** A failed store call: `kind` is "not_found" (no such member), "unavailable" (no store answered) or "failed". */
export class MemberAdminError extends Error {
  override readonly name = "MemberAdminError";
  readonly kind: "not_found" | "unavailable" | "failed";
  constructor(kind: MemberAdminError["kind"], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

function fromStoreError(error: StoreError): MemberAdminError {
  const message = error.message || StoreErrorKind[error.kind] || "store error";
  if (error.kind === StoreErrorKind.NOT_FOUND) return new MemberAdminError("not_found", message);
  return new MemberAdminError(error.kind === StoreErrorKind.UNAVAILABLE ? "unavailable" : "failed", `store: ${message}`);
}

async function call<T extends { error?: StoreError | undefined }>(request: () => Promise<T>): Promise<T> {
  let reply: T;
  try {
    reply = await request();
  } catch (err) {
    if (err instanceof BusError) throw new MemberAdminError("unavailable", `${err.kind}: ${err.message}`, { cause: err });
    throw err;
  }
  if (reply.error !== undefined) throw fromStoreError(reply.error);
  return reply;
}

/** The member operations over the bus (request/reply to the store). */
export function busMemberAdmin(nc: NatsConnection, names: BusNames, timeoutMs: number): MemberAdmin {
  const ops = STORE_OPERATIONS;
  const subject = (name: string): string => names.store(name);
  return {
    async createMember(name) {
      const r = await call(() => busRequest(nc, subject(ops.createMember.name), ops.createMember.request, { name }, ops.createMember.response, { timeoutMs }));
      if (r.member === undefined || r.key === "") throw new MemberAdminError("failed", "store: member.create returned no member or key");
      return { member: r.member, key: r.key };
    },
    async revokeMember(memberId) {
      const r = await call(() => busRequest(nc, subject(ops.revokeMember.name), ops.revokeMember.request, { memberId }, ops.revokeMember.response, { timeoutMs }));
      if (r.member === undefined) throw new MemberAdminError("failed", "store: member.revoke returned no member");
      return r.member;
    },
    async listMembers(includeRevoked) {
      return (await call(() => busRequest(nc, subject(ops.listMembers.name), ops.listMembers.request, { includeRevoked }, ops.listMembers.response, { timeoutMs }))).members;
    },
    async memberUsage(filter) {
      return (await call(() => busRequest(nc, subject(ops.memberUsage.name), ops.memberUsage.request, { ...filter }, ops.memberUsage.response, { timeoutMs }))).members;
    },
  };
}
