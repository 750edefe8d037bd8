/**
 * The admin CLI's commands: words, positional arguments and flags -> one
 * admin action (../actions/admin-actions.ts) and how its result reads as
 * text (command-spec.ts). `--json` prints the action's result as the API
 * answers it. admin-commands.ts parses against this table; the help text is
 * made from it.
 */
import type { CliCommand } from "./command-spec.ts";
import { keyCreate, keyList, keyRevoke, keyRotate, memberCreate, memberList, memberRevoke, memberTeam, usage } from "./member-commands.ts";
import { audit, cache, ledger, retentionRun, runs, spend } from "./report-commands.ts";
import { budgetDelete, budgetList, budgetSet, limitsGet, limitsSet, teamCreate, teamDelete, teamList, teamUpdate } from "./team-commands.ts";

export type { CliCommand, FlagSpec, Flags } from "./command-spec.ts";

export const CLI_COMMANDS: readonly CliCommand[] = [
  memberCreate,
  memberList,
  memberRevoke,
  memberTeam,
  usage,
  keyList,
  keyCreate,
  keyRevoke,
  keyRotate,
  teamList,
  teamCreate,
  teamUpdate,
  teamDelete,
  budgetList,
  budgetSet,
  budgetDelete,
  limitsGet,
  limitsSet,
  runs,
  spend,
  cache,
  ledger,
  audit,
  retentionRun,
  // The first spellings (before teams and keys): still accepted.
  { ...memberCreate, words: ["create"], alias: true },
  { ...memberList, words: ["list"], alias: true },
  { ...memberRevoke, words: ["revoke"], alias: true },
] as readonly CliCommand[];

export function usageLine(c: CliCommand): string {
  const flags = Object.entries(c.flags).map(([name, f]) => (f.type === "boolean" ? `[--${name}]` : `[--${name} ${f.hint ?? "<value>"}]`));
  return [...c.words, ...c.args, ...flags].join(" ");
}
