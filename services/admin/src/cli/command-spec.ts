/**
 * What a CLI command is (command-table.ts lists them): words, positional
 * arguments and flags -> one admin action, and how its result reads as text.
 */
import type { ActionResult, AdminActionKey } from "../actions/admin-actions.ts";
import type { MemberJson } from "../actions/admin-json.ts";

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

export function command<K extends AdminActionKey>(spec: CliCommand<K>): CliCommand<K> {
  return spec;
}

export const str = (flags: Flags, name: string): string => (typeof flags[name] === "string" ? (flags[name] as string) : "");

export function memberLine(m: MemberJson): string {
  return `${m.memberId}\t${m.name}\tcreated ${m.createdAt}${m.revokedAt ? `\trevoked ${m.revokedAt}` : ""}`;
}

export const teamFlag = { team: { type: "string", hint: "<team id>" } } as const;

/** --since / --until: a time range of the reports (RFC 3339 or YYYY-MM-DD). */
export const rangeFlags = { since: { type: "string", hint: "<date>" }, until: { type: "string", hint: "<date>" } } as const;

/** The action input of rangeFlags ("" = open). */
export const range = (flags: Flags): { since: string; until: string } => ({ since: str(flags, "since"), until: str(flags, "until") });

