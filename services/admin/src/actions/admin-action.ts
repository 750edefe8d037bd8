/**
 * What an admin action is (admin-actions.ts lists them all): the store
 * operations it may use, its input schema and what it does. The zod pieces
 * every action's input is built from are here too, so the API (JSON) and the
 * CLI (strings from flags) are read the same way.
 */
import { z } from "zod";
import type { StoreClient } from "@byok/store-client";

/** The store operations the admin service and CLI use. */
export type AdminStore = Pick<
  StoreClient,
  | "createMember"
  | "revokeMember"
  | "listMembers"
  | "memberUsage"
  | "cacheUsage"
  | "getMember"
  | "setMemberTeam"
  | "createTeam"
  | "updateTeam"
  | "getTeam"
  | "deleteTeam"
  | "listTeams"
  | "createMemberKey"
  | "listMemberKeys"
  | "revokeMemberKey"
  | "rotateMemberKey"
  | "setBudget"
  | "deleteBudget"
  | "listBudgets"
  | "getMemberLimits"
  | "setMemberLimits"
  | "listLedger"
  | "spendSeries"
  | "recentRuns"
  | "listAudit"
  | "purgeContent"
>;

export interface AdminAction<S extends z.ZodType = z.ZodType, R = unknown> {
  /** Dotted name, e.g. "member.create". */
  readonly name: string;
  readonly summary: string;
  /** Changes state (the API then needs the CSRF header with a cookie session). */
  readonly mutates: boolean;
  readonly input: S;
  run(store: AdminStore, input: z.infer<S>, now: Date): Promise<R>;
}

export function action<S extends z.ZodType, R>(definition: AdminAction<S, R>): AdminAction<S, R> {
  return definition;
}

export const id = (what: string) => z.string().trim().min(1, `${what} is required`);
export const text = z.string().trim().default("");
/** "" or an RFC 3339 time (the store checks the format); a bare date YYYY-MM-DD is 00:00 UTC. */
export const time = z
  .string()
  .trim()
  .default("")
  .transform((v) => (/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v));
/** A whole number from JSON or a CLI flag ("" / null / absent = unset). */
export const count = (what: string, options: { min?: number; max?: number } = {}) =>
  z.preprocess(
    (v) => (v === "" || v === null ? undefined : typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : v),
    z
      .number({ message: `${what} must be a whole number` })
      .int(`${what} must be a whole number`)
      .min(options.min ?? 1, `${what} must be at least ${options.min ?? 1}`)
      .max(options.max ?? Number.MAX_SAFE_INTEGER)
      .optional(),
  );
export const flag = z.preprocess((v) => v === true || v === "1" || v === "true", z.boolean());
/** USD as a decimal (at most 12 fractional digits, as the store keeps it). */
export const usd = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).trim().replace(/^\$/, ""))
  .pipe(z.string().regex(/^\d+(\.\d{1,12})?$/, "an amount in USD such as 25 or 7.50"));
/** Model ids, comma-separated in a flag or a list in JSON; null / "all" / [] = every model. */
export const modelList = z.preprocess(
  (v) => {
    if (v === undefined) return undefined;
    if (v === null || v === "all" || v === "") return null;
    const list = Array.isArray(v) ? v : String(v).split(",");
    const ids = list.map((m) => String(m).trim()).filter((m) => m !== "");
    return ids.length === 0 ? null : ids;
  },
  z.array(z.string()).nullable().optional(),
);
/** Days, or null / "keep" / 0 for "keep content". */
export const retention = z.preprocess(
  (v) => (v === undefined ? undefined : v === null || v === "keep" || v === "" || v === 0 || v === "0" ? null : typeof v === "string" ? Number(v) : v),
  z.number({ message: "retention days must be a whole number of days" }).int().min(1).max(36_500).nullable().optional(),
);
export const limit = (fallback: number, max: number) => count("limit", { max }).transform((v) => v ?? fallback);

