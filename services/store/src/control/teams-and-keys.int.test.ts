/**
 * Teams and member keys through the store's operations: the default team,
 * team CRUD and assignment, several keys per member with expiry, revoke and
 * rotate (with and without a grace period), hashes only.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_TEAM_ID, StoreErrorKind } from "@byok/contracts";
import { startTestStore, type TestStore } from "../store-test-harness.ts";

describe("teams and member keys", () => {
  let store: TestStore;
  let clock: Date;
  beforeEach(async () => {
    clock = new Date("2026-04-01T08:00:00.000Z");
    store = await startTestStore({ now: () => clock });
  });
  afterEach(() => store.close());

  it("puts members in the default team, moves them, and refuses to delete the default team or a team with members", async () => {
    const teams = await store.call("listTeams", {});
    expect(teams.teams).toEqual([expect.objectContaining({ teamId: DEFAULT_TEAM_ID, name: "default", isDefault: true, members: 0 })]);
    expect(teams.teams[0]?.allowedModels).toBeUndefined();

    const created = await store.call("createTeam", { name: "platform", allowedModels: { modelIds: ["gpt", "claude", "gpt"] }, retentionDays: 30 });
    expect(created.team).toMatchObject({ name: "platform", allowedModels: { modelIds: ["claude", "gpt"] }, retentionDays: 30, isDefault: false });
    expect((await store.call("createTeam", { name: "platform" })).error?.kind).toBe(StoreErrorKind.INVALID);
    const teamId = created.team!.teamId;

    const ada = await store.call("createMember", { name: "ada" });
    expect(ada.member?.teamId).toBe(DEFAULT_TEAM_ID);
    const bob = await store.call("createMember", { name: "bob", teamId });
    expect(bob.member?.teamId).toBe(teamId);
    expect((await store.call("createMember", { name: "eve", teamId: "00000000-0000-4000-8000-0000000000ee" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);

    expect((await store.call("listMembers", { teamId })).members.map((m) => m.name)).toEqual(["bob"]);
    expect((await store.call("setMemberTeam", { memberId: ada.member!.memberId, teamId })).member?.teamId).toBe(teamId);
    expect((await store.call("getMember", { memberId: ada.member!.memberId })).member?.teamId).toBe(teamId);
    expect((await store.call("getTeam", { teamId })).team?.members).toBe(2);

    expect((await store.call("deleteTeam", { teamId: DEFAULT_TEAM_ID })).error?.kind).toBe(StoreErrorKind.INVALID);
    expect((await store.call("deleteTeam", { teamId })).error?.kind).toBe(StoreErrorKind.INVALID);
    for (const m of [ada, bob]) await store.call("setMemberTeam", { memberId: m.member!.memberId, teamId: DEFAULT_TEAM_ID });
    expect((await store.call("deleteTeam", { teamId })).error).toBeUndefined();
    expect((await store.call("getTeam", { teamId })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
  });

  it("updates a team's name, allowed models (unset = all) and retention in one replace", async () => {
    const teamId = (await store.call("createTeam", { name: "a", allowedModels: { modelIds: ["x"] } })).team!.teamId;
    const updated = await store.call("updateTeam", { teamId, name: "b" });
    expect(updated.team).toMatchObject({ name: "b" });
    expect(updated.team?.allowedModels).toBeUndefined();
    expect(updated.team?.retentionDays).toBeUndefined();
    expect((await store.call("updateTeam", { teamId, name: "b", retentionDays: 0 })).error?.kind).toBe(StoreErrorKind.INVALID);
    expect((await store.call("updateTeam", { teamId, name: "b", allowedModels: { modelIds: ["has space"] } })).error?.kind).toBe(StoreErrorKind.INVALID);
  });

  it("gives a member several keys, lists them without secrets, lets an expired key stop working", async () => {
    const ada = await store.call("createMember", { name: "ada", keyLabel: "laptop" });
    const memberId = ada.member!.memberId;
    const second = await store.call("createMemberKey", { memberId, label: "ci", expiresAt: "2026-04-01T09:00:00Z" });
    expect(second.key).toMatchObject({ label: "ci", expiresAt: "2026-04-01T09:00:00.000Z", active: true });
    expect((await store.call("verifyMemberKey", { key: second.secret })).keyId).toBe(second.key!.keyId);
    expect((await store.call("verifyMemberKey", { key: ada.key })).keyId).toBe(ada.keyId);

    const listed = await store.call("listMemberKeys", { memberId });
    expect(listed.keys.map((k) => k.label)).toEqual(["ci", "laptop"]);
    expect(JSON.stringify(listed)).not.toContain(second.secret);
    const hashes = await store.sql("SELECT encode(key_hash, 'hex') AS h FROM member_keys");
    expect(JSON.stringify(hashes.rows)).not.toContain(second.secret);

    clock = new Date("2026-04-01T09:00:01.000Z");
    expect((await store.call("verifyMemberKey", { key: second.secret })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("listMemberKeys", { memberId })).keys.map((k) => k.label)).toEqual(["laptop"]);
    expect((await store.call("listMemberKeys", { memberId, includeInactive: true })).keys.find((k) => k.label === "ci")?.active).toBe(false);

    expect((await store.call("createMemberKey", { memberId, expiresAt: "2026-04-01T09:00:00Z" })).error?.kind).toBe(StoreErrorKind.INVALID);
    expect((await store.call("createMemberKey", { memberId: "00000000-0000-4000-8000-000000000000" })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
  });

  it("revokes one key and keeps the others; revoking the member stops them all", async () => {
    const ada = await store.call("createMember", { name: "ada" });
    const memberId = ada.member!.memberId;
    const other = await store.call("createMemberKey", { memberId, label: "other" });
    const revoked = await store.call("revokeMemberKey", { keyId: ada.keyId });
    expect(revoked.key).toMatchObject({ active: false });
    expect((await store.call("revokeMemberKey", { keyId: ada.keyId })).key?.revokedAt).toBe(revoked.key?.revokedAt);
    expect((await store.call("verifyMemberKey", { key: ada.key })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("verifyMemberKey", { key: other.secret })).memberId).toBe(memberId);

    await store.call("revokeMember", { memberId });
    expect((await store.call("verifyMemberKey", { key: other.secret })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("createMemberKey", { memberId })).error?.kind).toBe(StoreErrorKind.INVALID);
  });

  it("rotates a key: the new one works at once, the old one stops now or after its grace period", async () => {
    const ada = await store.call("createMember", { name: "ada", keyLabel: "laptop" });
    const now = await store.call("rotateMemberKey", { keyId: ada.keyId });
    expect(now.key).toMatchObject({ label: "laptop", active: true });
    expect(now.previous).toMatchObject({ keyId: ada.keyId, active: false, replacedByKeyId: now.key!.keyId });
    expect((await store.call("verifyMemberKey", { key: ada.key })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("verifyMemberKey", { key: now.secret })).keyId).toBe(now.key!.keyId);
    expect((await store.call("rotateMemberKey", { keyId: ada.keyId })).error?.kind).toBe(StoreErrorKind.INVALID);

    const graceful = await store.call("rotateMemberKey", { keyId: now.key!.keyId, graceSeconds: 600 });
    expect(graceful.previous).toMatchObject({ active: true, expiresAt: "2026-04-01T08:10:00.000Z" });
    expect((await store.call("verifyMemberKey", { key: now.secret })).error).toBeUndefined();
    clock = new Date("2026-04-01T08:10:00.000Z");
    expect((await store.call("verifyMemberKey", { key: now.secret })).error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    expect((await store.call("verifyMemberKey", { key: graceful.secret })).error).toBeUndefined();
  });
});
