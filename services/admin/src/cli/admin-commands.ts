/**
 * `npm run admin -- <command>`: member keys and usage.
 *
 *   create <name>                 a member and its gateway key (printed once)
 *   revoke <member id>            the key stops working (after the proxy's MEMBER_CACHE_MS)
 *   list [--all]                  members (with --all also revoked ones)
 *   usage [--member <id>] [--since <date>] [--until <date>]
 *                                 runs and provider-reported tokens per member
 *
 * `--json` prints the result as JSON on stdout. Every error names the gateway
 * address the command used (gateway-target.ts).
 */
import { parseArgs } from "node:util";
import type { CacheUsageRow, MemberRecord } from "@byok/contracts";
import { StoreFailure } from "@byok/store-client";
import type { MemberAdmin } from "./member-admin.ts";
import { formatCacheTables } from "./cache-table.ts";
import { formatUsageTable } from "./usage-table.ts";

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export const ADMIN_USAGE = [
  "usage: npm run admin -- create <name> | revoke <member id> | list [--all]",
  "                      | usage [--member <id>] [--since <date>] [--until <date>]",
  "       [--json] [--nats-url <url> [--bus-prefix <prefix>]]",
  "  usage counts the runs that began at or after --since and before --until: an RFC 3339 time,",
  "  or a date YYYY-MM-DD meaning 00:00 UTC (so --until 2026-02-01 ends with January 31).",
  "  The gateway: --nats-url, else NATS_URL (compose: docker compose exec edge-proxy npm run admin -- ...),",
  "  else the gateway npm start runs from this repository (.data/local-gateway.json, or DATA_DIR).",
].join("\n");

export const ADMIN_OPTIONS = {
  all: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
  member: { type: "string", default: "" },
  since: { type: "string", default: "" },
  until: { type: "string", default: "" },
  "nats-url": { type: "string" },
  "bus-prefix": { type: "string" },
} as const;

export type AdminCommand =
  | { kind: "create"; name: string }
  | { kind: "revoke"; memberId: string }
  | { kind: "list"; includeRevoked: boolean }
  | { kind: "usage"; memberId: string; since: string; until: string };

export type ParsedAdminArgs =
  | { kind: "command"; command: AdminCommand; json: boolean; natsUrl: string | undefined; busPrefix: string | undefined }
  | { kind: "help"; natsUrl: string | undefined; busPrefix: string | undefined }
  | { kind: "invalid"; message: string };

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A date alone means its start (00:00 UTC); anything else goes to the store as given (it checks RFC 3339). */
function rangeBound(value: string): string {
  return DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value;
}

export function parseAdminArgs(args: readonly string[]): ParsedAdminArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: ADMIN_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    return { kind: "invalid", message: (err as Error).message };
  }
  const v = parsed.values;
  const target = { natsUrl: v["nats-url"], busPrefix: v["bus-prefix"] };
  if (v.help) return { kind: "help", ...target };
  const [name, argument, ...rest] = parsed.positionals;
  const usageOptions = v.member !== "" || v.since !== "" || v.until !== "";
  const invalid = (message: string): ParsedAdminArgs => ({ kind: "invalid", message });
  if (rest.length > 0) return invalid(`unexpected arguments: ${rest.join(" ")}`);
  if (v.all && name !== "list") return invalid("--all belongs to list");
  if (usageOptions && name !== "usage") return invalid("--member, --since and --until belong to usage");
  const command = ((): AdminCommand | string => {
    switch (name) {
      case "create":
        return argument ? { kind: "create", name: argument } : "create needs a name";
      case "revoke":
        return argument ? { kind: "revoke", memberId: argument } : "revoke needs a member id (see list)";
      case "list":
        return argument ? `list takes no argument (got ${argument})` : { kind: "list", includeRevoked: v.all };
      case "usage":
        return argument ? `usage takes no argument (got ${argument})` : { kind: "usage", memberId: v.member, since: rangeBound(v.since), until: rangeBound(v.until) };
      case undefined:
        return "no command given";
      default:
        return `unknown command ${name}`;
    }
  })();
  if (typeof command === "string") return invalid(command);
  return { kind: "command", command, json: v.json, ...target };
}

function describe(m: MemberRecord): string {
  return `${m.memberId}\t${m.name}\tcreated ${m.createdAt}${m.revokedAt ? `\trevoked ${m.revokedAt}` : ""}`;
}

function memberJson(m: MemberRecord): Record<string, string> {
  return { memberId: m.memberId, name: m.name, createdAt: m.createdAt, ...(m.revokedAt ? { revokedAt: m.revokedAt } : {}) };
}

/** JSON with the protobuf int64 counters as numbers. */
function json(value: unknown): string {
  return `${JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v), 2)}\n`;
}

/**
 * Runs one command against `members`; returns the exit code. `where` names
 * the gateway address in error messages. A failed store call is reported on
 * stderr (and as {"error": ...} on stdout with --json).
 */
export async function runAdminCommand(command: AdminCommand, members: MemberAdmin, io: CliIo, options: { json: boolean; where: string }): Promise<number> {
  try {
    switch (command.kind) {
      case "create": {
        const { member, key } = await members.createMember(command.name);
        if (options.json) io.out(json({ member: memberJson(member), key }));
        else
          io.out(
            [
              `member ${member.memberId} (${member.name}) created.`,
              `gateway key (shown once, store it now): ${key}`,
              `next, on ${member.name}'s machine: npm run setup -- --gateway http://<gateway host>:<proxy port> --key ${key}`,
              "",
            ].join("\n"),
          );
        return 0;
      }
      case "revoke": {
        const member = await members.revokeMember(command.memberId);
        io.out(options.json ? json({ member: memberJson(member) }) : `revoked: ${describe(member)}\n`);
        return 0;
      }
      case "list": {
        const list = await members.listMembers(command.includeRevoked);
        if (options.json) io.out(json({ members: list.map(memberJson) }));
        else io.out(list.length === 0 ? "no members\n" : `${list.map(describe).join("\n")}\n`);
        return 0;
      }
      case "usage": {
        const filter = { memberId: command.memberId, since: command.since, until: command.until };
        const rows = await members.memberUsage(filter);
        const cache = await members.cacheUsage({ ...filter, conversationLimit: 0 });
        if (options.json) {
          const plain = ({ $typeName: _t, ...row }: CacheUsageRow) => row;
          io.out(json({ members: rows.map(({ $typeName: _t, ...row }) => row), cache: { models: cache.models.map(plain), conversations: cache.conversations.map(plain) } }));
        } else io.out(formatUsageTable(rows) + formatCacheTables(cache));
        return 0;
      }
    }
  } catch (err) {
    if (!(err instanceof StoreFailure)) throw err;
    const text =
      err.kind === "not_found"
        ? `not found at ${options.where}: ${err.detail}`
        : err.kind === "unavailable"
          ? `the gateway's store did not answer at ${options.where}: ${err.detail}`
          : `failed at ${options.where}: ${err.message}`;
    if (options.json) io.out(json({ error: { kind: err.kind, message: text } }));
    io.err(`admin: ${text}\n`);
    return 1;
  }
}
