import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { MemberRecordSchema, type MemberRecord } from "@byok/contracts";
import type { MemberStoreClient, StoreCallOutcome } from "../member-store.ts";
import { runAdminCommand } from "./admin.ts";

/** In-memory stand-in for the store's member operations (the real ones are exercised in tests/edge-proxy.test.ts). */
function memoryMembers(): MemberStoreClient {
  const members = new Map<string, MemberRecord>();
  return {
    async verifyKey() {
      return { kind: "unknown" };
    },
    async create(name): Promise<StoreCallOutcome<{ member: MemberRecord; key: string }>> {
      const member = create(MemberRecordSchema, { memberId: `m${members.size + 1}`, name, createdAt: "2026-01-01T00:00:00Z" });
      members.set(member.memberId, member);
      return { kind: "ok", value: { member, key: `key-${member.memberId}` } };
    },
    async revoke(memberId) {
      const m = members.get(memberId);
      if (!m) return { kind: "not_found", message: `no member ${memberId}` };
      m.revokedAt = "2026-01-02T00:00:00Z";
      return { kind: "ok", value: m };
    },
    async list(includeRevoked) {
      return { kind: "ok", value: [...members.values()].filter((m) => includeRevoked || !m.revokedAt) };
    },
  };
}

async function run(client: MemberStoreClient, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runAdminCommand(args, client, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("admin command", () => {
  it("creates, lists and revokes members", async () => {
    const client = memoryMembers();
    const created = await run(client, "create", "alice");
    expect(created.code).toBe(0);
    expect(created.out).toContain("gateway key (shown once, store it now): key-m1");
    expect((await run(client, "list")).out).toContain("m1\talice");
    expect((await run(client, "revoke", "m1")).out).toMatch(/revoked: m1\talice.*revoked 2026-01-02/);
    expect((await run(client, "list")).out).toBe("no members\n");
    expect((await run(client, "list", "--all")).out).toContain("m1\talice");
    const missing = await run(client, "revoke", "m9");
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/not found/);
  });

  it("prints usage for anything else", async () => {
    const client = memoryMembers();
    for (const args of [[], ["create"], ["delete", "x"], ["list", "extra"], ["create", "a", "b"], ["--bogus"]]) {
      const r = await run(client, ...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/usage:/);
    }
  });
});
