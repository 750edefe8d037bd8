/**
 * The admin CLI's commands: words, positional arguments and flags -> one
 * admin action (../actions/admin-actions.ts) and how its result reads as
 * text. `--json` prints the action's result as the API answers it.
 * admin-commands.ts parses against this table; the help text is made from it.
 */
import type { ActionResult, AdminActionKey } from "../actions/admin-actions.ts";
import type { MemberJson } from "../actions/admin-json.ts";
import { formatUsageTable } from "./usage-table.ts";

export type Flags = Readonly<Record<string, string | boolean | undefined>>;

export interface FlagSpec {
  readonly type: "string" | "boolean";
  /** Shown in the usage line: `--since <date>`. */
  readonly hint?: string;
}

export interface CliCommand<K extends AdminActionKey = AdminActionKey> {
  readonly words: readonly string[];
  /** Positional arguments, in order (all required). */
  readonly args: readonly string[];
  readonly flags: Readonly<Record<string, FlagSpec>>;
  readonly action: K;
  readonly summary: string;
  /** Older spelling kept working (not listed in the help). */
  readonly alias?: boolean;
  input(args: readonly string[], flags: Flags): unknown;
  text(result: ActionResult<K>): string;
}

function command<K extends AdminActionKey>(spec: CliCommand<K>): CliCommand<K> {
  return spec;
}

const str = (flags: Flags, name: string): string => (typeof flags[name] === "string" ? (flags[name] as string) : "");

function memberLine(m: MemberJson): string {
  return `${m.memberId}\t${m.name}\tcreated ${m.createdAt}${m.revokedAt ? `\trevoked ${m.revokedAt}` : ""}`;
}

const memberCreate = command({
  words: ["member", "create"],
  args: ["<name>"],
  flags: {},
  action: "createMember",
  summary: "a member and its gateway key (printed once)",
  input: ([name]) => ({ name }),
  text: ({ member, key }) =>
    [
      `member ${member.memberId} (${member.name}) created.`,
      `gateway key (shown once, store it now): ${key}`,
      `next, on ${member.name}'s machine: npm run setup -- --gateway http://<gateway host>:<proxy port> --key ${key}`,
      "",
    ].join("\n"),
});

const memberList = command({
  words: ["member", "list"],
  args: [],
  flags: { all: { type: "boolean" } },
  action: "listMembers",
  summary: "members (--all: with revoked ones)",
  input: (_args, flags) => ({ includeRevoked: flags["all"] === true }),
  text: ({ members }) => (members.length === 0 ? "no members\n" : `${members.map(memberLine).join("\n")}\n`),
});

const memberRevoke = command({
  words: ["member", "revoke"],
  args: ["<member id>"],
  flags: {},
  action: "revokeMember",
  summary: "every key of the member stops working (within the proxy's MEMBER_CACHE_MS)",
  input: ([memberId]) => ({ memberId }),
  text: ({ member }) => `revoked: ${memberLine(member)}\n`,
});

const usage = command({
  words: ["usage"],
  args: [],
  flags: { member: { type: "string", hint: "<id>" }, since: { type: "string", hint: "<date>" }, until: { type: "string", hint: "<date>" } },
  action: "memberUsage",
  summary: "runs and provider-reported tokens per member (runs that began in [--since, --until))",
  input: (_args, flags) => ({ memberId: str(flags, "member"), since: str(flags, "since"), until: str(flags, "until") }),
  text: ({ members }) => formatUsageTable(members),
});

export const CLI_COMMANDS: readonly CliCommand[] = [
  memberCreate,
  memberList,
  memberRevoke,
  usage,
  // The first spellings (before teams and keys): still accepted.
  { ...memberCreate, words: ["create"], alias: true },
  { ...memberList, words: ["list"], alias: true },
  { ...memberRevoke, words: ["revoke"], alias: true },
] as readonly CliCommand[];

export function usageLine(c: CliCommand): string {
  const flags = Object.entries(c.flags).map(([name, f]) => (f.type === "boolean" ? `[--${name}]` : `[--${name} ${f.hint ?? "<value>"}]`));
  return [...c.words, ...c.args, ...flags].join(" ");
}
