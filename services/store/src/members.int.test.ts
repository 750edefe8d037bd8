import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreErrorKind } from "@byok/contracts";
import { startTestStore, type TestStore } from "./store-test-harness.ts";

describe("members", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  it("creates a member whose key verifies, and stores only the key's hash", async () => {
    const created = await store.call("createMember", { name: "Ada" });
    expect(created.error).toBeUndefined();
    expect(created.key).toMatch(/^byok_[A-Za-z0-9_-]{43}$/);
    expect(created.member).toMatchObject({ name: "Ada", revokedAt: "" });
    expect(Number.isNaN(Date.parse(created.member!.createdAt))).toBe(false);

    const verified = await store.call("verifyMemberKey", { key: created.key });
    expect(verified).toMatchObject({ memberId: created.member!.memberId, name: "Ada" });

    const stored = await store.sql("SELECT key_hash FROM member_keys");
    expect(JSON.stringify(stored.rows)).not.toContain(created.key);
  });

  it("gives each member a different key and rejects unknown keys", async () => {
    const a = await store.call("createMember", { name: "A" });
    const b = await store.call("createMember", { name: "B" });
    expect(a.key).not.toBe(b.key);
    expect((await store.call("verifyMemberKey", { key: b.key })).memberId).toBe(b.member!.memberId);
    expect((await store.call("verifyMemberKey", { key: `${a.key}x` })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("verifyMemberKey", { key: "" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
  });

  it("revoked keys stop verifying; revoke is idempotent; list hides revoked members unless asked", async () => {
    const a = await store.call("createMember", { name: "A" });
    const b = await store.call("createMember", { name: "B" });
    const revoked = await store.call("revokeMember", { memberId: a.member!.memberId });
    expect(revoked.member!.revokedAt).not.toBe("");
    const again = await store.call("revokeMember", { memberId: a.member!.memberId });
    expect(again.member!.revokedAt).toBe(revoked.member!.revokedAt);

    expect((await store.call("verifyMemberKey", { key: a.key })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("verifyMemberKey", { key: b.key })).memberId).toBe(b.member!.memberId);

    expect((await store.call("listMembers", {})).members.map((m) => m.name)).toEqual(["B"]);
    expect((await store.call("listMembers", { includeRevoked: true })).members.map((m) => m.name)).toEqual(["A", "B"]);
  });

  it("rejects an empty name and unknown member ids", async () => {
    expect((await store.call("createMember", { name: "  " })).error?.kind).toBe(StoreErrorKind.INVALID);
    expect((await store.call("revokeMember", { memberId: "nobody" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("revokeMember", { memberId: "00000000-0000-4000-8000-000000000000" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
  });
});
