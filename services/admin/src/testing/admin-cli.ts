/**
 * The admin CLI and store for tests: `runAdmin` runs one command line
 * against a store and returns what it printed (as main.ts would, without the
 * process), `memoryMembers` is an in-memory stand-in for the store's member
 * operations (create, revoke, list) that a unit test extends with the
 * operations it needs.
 */
import { create } from "@bufbuild/protobuf";
import { MemberRecordSchema, type MemberRecord } from "@byok/contracts";
import { StoreFailure } from "@byok/store-client";
import type { AdminStore } from "../actions/admin-actions.ts";
import { parseAdminArgs, runAdminCommand } from "../cli/admin-commands.ts";

export interface AdminRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `args` as the admin CLI would; arguments that do not parse are exit code 2 with the usage error. */
export async function runAdmin(store: AdminStore, args: readonly string[], where = "the test's bus"): Promise<AdminRun> {
  let out = "";
  let err = "";
  const parsed = parseAdminArgs([...args]);
  if (parsed.kind !== "command") return { code: 2, out, err: `usage: ${parsed.kind === "invalid" ? parsed.message : "help"}` };
  const code = await runAdminCommand(parsed.command, store, { out: (t) => (out += t), err: (t) => (err += t) }, { json: parsed.json, where });
  return { code, out, err };
}

/** Members in memory: ids m1, m2, ...; revoking an unknown one is the store's not_found failure. */
export function memoryMembers(): Pick<AdminStore, "createMember" | "revokeMember" | "listMembers"> {
  const members = new Map<string, MemberRecord>();
  const store = {
    async createMember(name: string) {
      const member = create(MemberRecordSchema, { memberId: `m${members.size + 1}`, name, createdAt: "2026-01-01T00:00:00Z" });
      members.set(member.memberId, member);
      return { member, key: `key-${member.memberId}`, keyId: `k-${member.memberId}` };
    },
    async revokeMember(memberId: string) {
      const m = members.get(memberId);
      if (!m) throw new StoreFailure("not_found", "member.revoke", `no member ${memberId}`);
      m.revokedAt = "2026-01-02T00:00:00Z";
      return m;
    },
    async listMembers(includeRevoked: boolean) {
      return [...members.values()].filter((m) => includeRevoked || !m.revokedAt);
    },
  };
  return store as unknown as Pick<AdminStore, "createMember" | "revokeMember" | "listMembers">;
}
