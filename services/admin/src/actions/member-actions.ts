/** Admin actions on members and their keys (admin-actions.ts has the whole table). */
import { z } from "zod";
import { action, flag, id, text, time, count } from "./admin-action.ts";
import { keyJson, memberJson, memberUsageJson } from "./admin-json.ts";

export const MEMBER_ACTIONS = {
  listMembers: action({
    name: "member.list",
    summary: "members (with --all also revoked ones)",
    mutates: false,
    input: z.object({ includeRevoked: flag.default(false), teamId: text }),
    async run(store, input) {
      return { members: (await store.listMembers(input.includeRevoked, input.teamId)).map(memberJson) };
    },
  }),
  createMember: action({
    name: "member.create",
    summary: "a member and its first gateway key (shown once)",
    mutates: true,
    input: z.object({ name: z.string().trim().min(1, "name is required").max(200), teamId: text, keyLabel: text, keyExpiresAt: time }),
    async run(store, input) {
      const created = await store.createMember(input.name, { teamId: input.teamId, keyLabel: input.keyLabel, keyExpiresAt: input.keyExpiresAt });
      return { member: memberJson(created.member), key: created.key, keyId: created.keyId };
    },
  }),
  revokeMember: action({
    name: "member.revoke",
    summary: "revoke a member (every key stops working within MEMBER_CACHE_MS)",
    mutates: true,
    input: z.object({ memberId: id("member id") }),
    async run(store, input) {
      return { member: memberJson(await store.revokeMember(input.memberId)) };
    },
  }),
  setMemberTeam: action({
    name: "member.set_team",
    summary: "move a member to another team",
    mutates: true,
    input: z.object({ memberId: id("member id"), teamId: id("team id") }),
    async run(store, input) {
      return { member: memberJson(await store.setMemberTeam(input.memberId, input.teamId)) };
    },
  }),
  memberUsage: action({
    name: "member.usage",
    summary: "runs, provider-reported tokens and cost per member over a time range",
    mutates: false,
    input: z.object({ memberId: text, since: time, until: time }),
    async run(store, input) {
      return { members: (await store.memberUsage({ memberId: input.memberId, since: input.since, until: input.until })).map(memberUsageJson) };
    },
  }),

  // ---- Keys ----
  listKeys: action({
    name: "key.list",
    summary: "a member's keys (with --all also revoked and expired ones)",
    mutates: false,
    input: z.object({ memberId: id("member id"), includeInactive: flag.default(false) }),
    async run(store, input) {
      return { keys: (await store.listMemberKeys(input.memberId, input.includeInactive)).map(keyJson) };
    },
  }),
  createKey: action({
    name: "key.create",
    summary: "another key for a member (shown once), optionally expiring",
    mutates: true,
    input: z.object({ memberId: id("member id"), label: text, expiresAt: time }),
    async run(store, input) {
      const created = await store.createMemberKey({ memberId: input.memberId, label: input.label, expiresAt: input.expiresAt });
      return { key: keyJson(created.key), secret: created.secret };
    },
  }),
  revokeKey: action({
    name: "key.revoke",
    summary: "one key stops working (within MEMBER_CACHE_MS)",
    mutates: true,
    input: z.object({ keyId: id("key id") }),
    async run(store, input) {
      return { key: keyJson(await store.revokeMemberKey(input.keyId)) };
    },
  }),
  rotateKey: action({
    name: "key.rotate",
    summary: "a new key replaces one (the old one stops now, or after --grace-seconds)",
    mutates: true,
    input: z.object({ keyId: id("key id"), expiresAt: time, graceSeconds: count("grace seconds", { min: 0, max: 30 * 86_400 }) }),
    async run(store, input) {
      const rotated = await store.rotateMemberKey({ keyId: input.keyId, expiresAt: input.expiresAt, graceSeconds: input.graceSeconds ?? 0 });
      return { key: keyJson(rotated.key), secret: rotated.secret, previous: keyJson(rotated.previous) };
    },
  }),

} as const;
