/**
 * `npm run proxy:admin -- create <name> | revoke <member id> | list [--all] |
 * usage [--member <id>] [--since <date>] [--until <date>]`: manages member
 * gateway keys, which the store keeps (only a hash of each key), and reports
 * each member's provider-reported usage, with the prompt-cache share (cached /
 * input) per model and per conversation. A new key is printed once.
 */
import { parseArgs } from "node:util";
import { busNames, type MemberRecord } from "@byok/contracts";
import { connectNats, silentLogger } from "@byok/platform";
import { StoreFailure } from "@byok/store-client";
import type { EdgeProxyConfig } from "../config.ts";
import { memberStoreClient, type MemberStoreClient } from "../member-store.ts";
import type { CliIo } from "./setup.ts";
import { formatCacheTables } from "./cache-table.ts";
import { formatUsageTable } from "./usage-table.ts";

const USAGE = [
  "usage: npm run proxy:admin -- create <name> | revoke <member id> | list [--all]",
  "                            | usage [--member <id>] [--since <date>] [--until <date>]",
  "  usage counts the runs that began at or after --since and before --until: an RFC 3339 time,",
  "  or a date YYYY-MM-DD meaning 00:00 UTC (so --until 2026-02-01 ends with January 31).",
].join("\n");

const OPTIONS = {
  all: { type: "boolean", default: false },
  member: { type: "string", default: "" },
  since: { type: "string", default: "" },
  until: { type: "string", default: "" },
} as const;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A date alone means its start (00:00 UTC); anything else goes to the store as given (it checks RFC 3339). */
function rangeBound(value: string): string {
  return DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value;
}

function describe(m: MemberRecord): string {
  return `${m.memberId}\t${m.name}\tcreated ${m.createdAt}${m.revokedAt ? `\trevoked ${m.revokedAt}` : ""}`;
}

type Attempt<T> = { readonly kind: "ok"; readonly value: T } | { readonly kind: "failed" };

/** One store call; a StoreFailure is printed ("not found: ..." or "failed: ...") instead of thrown. */
async function attempt<T>(call: () => Promise<T>, io: CliIo): Promise<Attempt<T>> {
  try {
    return { kind: "ok", value: await call() };
  } catch (error) {
    if (!(error instanceof StoreFailure)) throw error;
    io.err(error.kind === "not_found" ? `not found: ${error.detail}\n` : `failed: ${error.message}\n`);
    return { kind: "failed" };
  }
}

/** Runs one admin command against `client`; returns the exit code. */
export async function runAdminCommand(args: readonly string[], client: MemberStoreClient, io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const [command, argument, ...rest] = parsed.positionals;
  const { all, member, since, until } = parsed.values;
  const usageOptions = member !== "" || since !== "" || until !== "";
  if (rest.length > 0 || (all && command !== "list") || (usageOptions && command !== "usage")) {
    io.err(`${USAGE}\n`);
    return 2;
  }
  switch (command) {
    case "create": {
      if (!argument) break;
      const outcome = await attempt(() => client.createMember(argument), io);
      if (outcome.kind === "failed") return 1;
      io.out(
        [
          `member ${outcome.value.member.memberId} (${outcome.value.member.name}) created.`,
          `gateway key (shown once, store it now): ${outcome.value.key}`,
          `next: npm run proxy:setup -- --key ${outcome.value.key} --proxy-url http://<gateway host>:<port>`,
          "",
        ].join("\n"),
      );
      return 0;
    }
    case "revoke": {
      if (!argument) break;
      const outcome = await attempt(() => client.revokeMember(argument), io);
      if (outcome.kind === "failed") return 1;
      io.out(`revoked: ${describe(outcome.value)}\n`);
      return 0;
    }
    case "list": {
      if (argument) break;
      const outcome = await attempt(() => client.listMembers(all), io);
      if (outcome.kind === "failed") return 1;
      io.out(outcome.value.length === 0 ? "no members\n" : `${outcome.value.map(describe).join("\n")}\n`);
      return 0;
    }
    case "usage": {
      if (argument) break;
      const filter = { memberId: member, since: rangeBound(since), until: rangeBound(until) };
      const outcome = await attempt(() => client.memberUsage(filter), io);
      if (outcome.kind === "failed") return 1;
      const cache = await attempt(() => client.cacheUsage({ ...filter, conversationLimit: 0 }), io);
      if (cache.kind === "failed") return 1;
      io.out(formatUsageTable(outcome.value) + formatCacheTables(cache.value));
      return 0;
    }
    default:
      break;
  }
  io.err(`${USAGE}\n`);
  return 2;
}

export async function runAdmin(args: readonly string[], config: EdgeProxyConfig, io: CliIo): Promise<number> {
  const nc = await connectNats(config.natsUrl, "edge-proxy-admin", silentLogger());
  try {
    return await runAdminCommand(args, memberStoreClient(nc, busNames(config.busPrefix), config.storeTimeoutMs), io);
  } finally {
    await nc.close();
  }
}
