/** CLI commands for members and their keys (command-table.ts lists every command). */
import type { KeyJson } from "../actions/admin-json.ts";
import { command, memberLine, range, rangeFlags, str, teamFlag } from "./command-spec.ts";
import { cell, textTable } from "./text-table.ts";
import { formatUsageTable } from "./usage-table.ts";

export const memberCreate = command({
  words: ["member", "create"],
  args: ["<name>"],
  flags: { ...teamFlag, "key-label": { type: "string", hint: "<label>" }, expires: { type: "string", hint: "<date>" } },
  action: "createMember",
  summary: "a member and its gateway key (printed once); default team unless --team",
  input: ([name], flags) => ({ name, teamId: str(flags, "team"), keyLabel: str(flags, "key-label"), keyExpiresAt: str(flags, "expires") }),
  text: ({ member, key }) =>
    [
      `member ${member.memberId} (${member.name}) created.`,
      `gateway key (shown once, store it now): ${key}`,
      `next, on ${member.name}'s machine: npm run setup -- --gateway http://<gateway host>:<proxy port> --key ${key}`,
      "",
    ].join("\n"),
});

export const memberList = command({
  words: ["member", "list"],
  args: [],
  flags: { all: { type: "boolean" }, ...teamFlag },
  action: "listMembers",
  summary: "members (--all: with revoked ones)",
  input: (_args, flags) => ({ includeRevoked: flags["all"] === true, teamId: str(flags, "team") }),
  text: ({ members }) => (members.length === 0 ? "no members\n" : `${members.map(memberLine).join("\n")}\n`),
});

export const memberRevoke = command({
  words: ["member", "revoke"],
  args: ["<member id>"],
  flags: {},
  action: "revokeMember",
  summary: "every key of the member stops working (within the proxy's MEMBER_CACHE_MS)",
  input: ([memberId]) => ({ memberId }),
  text: ({ member }) => `revoked: ${memberLine(member)}\n`,
});

export const memberTeam = command({
  words: ["member", "team"],
  args: ["<member id>", "<team id>"],
  flags: {},
  action: "setMemberTeam",
  summary: "move a member to another team",
  input: ([memberId, teamId]) => ({ memberId, teamId }),
  text: ({ member }) => `${member.memberId} (${member.name}) is now in team ${member.teamId}\n`,
});

export const usage = command({
  words: ["usage"],
  args: [],
  flags: { member: { type: "string", hint: "<id>" }, ...rangeFlags },
  action: "memberUsage",
  summary: "runs and provider-reported tokens per member (runs that began in [--since, --until))",
  input: (_args, flags) => ({ memberId: str(flags, "member"), ...range(flags) }),
  text: ({ members }) => formatUsageTable(members),
});

function keyState(k: KeyJson): string {
  if (k.active) return "active";
  if (k.replacedByKeyId) return `replaced by ${k.replacedByKeyId}`;
  return k.revokedAt ? "revoked" : "expired";
}

export const keyList = command({
  words: ["key", "list"],
  args: ["<member id>"],
  flags: { all: { type: "boolean" } },
  action: "listKeys",
  summary: "a member's keys (--all: with revoked and expired ones)",
  input: ([memberId], flags) => ({ memberId, includeInactive: flags["all"] === true }),
  text: ({ keys }) =>
    textTable(
      ["KEY", "LABEL", "CREATED", "EXPIRES", "STATE"],
      keys.map((k) => [k.keyId, cell(k.label), k.createdAt, k.expiresAt ?? "never", keyState(k)]),
      "no keys",
    ),
});

const secretLines = (title: string, secret: string): string => `${title}\ngateway key (shown once, store it now): ${secret}\n`;

export const keyCreate = command({
  words: ["key", "create"],
  args: ["<member id>"],
  flags: { label: { type: "string", hint: "<label>" }, expires: { type: "string", hint: "<date>" } },
  action: "createKey",
  summary: "another key for the member (printed once)",
  input: ([memberId], flags) => ({ memberId, label: str(flags, "label"), expiresAt: str(flags, "expires") }),
  text: ({ key, secret }) => secretLines(`key ${key.keyId} created for member ${key.memberId}${key.expiresAt ? ` (expires ${key.expiresAt})` : ""}.`, secret),
});

export const keyRevoke = command({
  words: ["key", "revoke"],
  args: ["<key id>"],
  flags: {},
  action: "revokeKey",
  summary: "one key stops working (within MEMBER_CACHE_MS)",
  input: ([keyId]) => ({ keyId }),
  text: ({ key }) => `revoked key ${key.keyId} of member ${key.memberId}\n`,
});

export const keyRotate = command({
  words: ["key", "rotate"],
  args: ["<key id>"],
  flags: { expires: { type: "string", hint: "<date>" }, "grace-seconds": { type: "string", hint: "<n>" } },
  action: "rotateKey",
  summary: "a new key replaces it; the old one stops now or after --grace-seconds",
  input: ([keyId], flags) => ({ keyId, expiresAt: str(flags, "expires"), graceSeconds: str(flags, "grace-seconds") }),
  text: ({ key, secret, previous }) =>
    secretLines(`key ${previous.keyId} replaced by ${key.keyId}${previous.active ? ` (the old key works until ${previous.expiresAt})` : ""}.`, secret),
});

