/**
 * Every admin action, once: its input (a zod schema: what the API body/query
 * and the CLI flags must turn into) and what it does through the store. The
 * HTTP API (http/api-routes.ts) and the CLI (cli/admin-commands.ts) are two
 * doors to this table, so an action exists in both or in neither
 * (admin-actions.test.ts checks it). Results are the JSON shapes of
 * admin-json.ts.
 */
import { z } from "zod";
import type { StoreClient } from "@byok/store-client";
import { memberJson, memberUsageJson } from "./admin-json.ts";

/** The store operations the admin service and CLI use. */
export type AdminStore = Pick<StoreClient, "createMember" | "revokeMember" | "listMembers" | "memberUsage">;

export interface AdminAction<S extends z.ZodType = z.ZodType, R = unknown> {
  /** Dotted name, e.g. "member.create" (metrics label, CLI --help). */
  readonly name: string;
  readonly summary: string;
  /** Changes state (the API then needs the CSRF header with a cookie session). */
  readonly mutates: boolean;
  readonly input: S;
  run(store: AdminStore, input: z.infer<S>): Promise<R>;
}

function action<S extends z.ZodType, R>(definition: AdminAction<S, R>): AdminAction<S, R> {
  return definition;
}

const id = (what: string) => z.string().trim().min(1, `${what} is required`);
/** "" or an RFC 3339 time (the store checks the format; a bare date is 00:00 UTC). */
const timeBound = z
  .string()
  .trim()
  .default("")
  .transform((v) => (/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v));

export const ADMIN_ACTIONS = {
  listMembers: action({
    name: "member.list",
    summary: "members (with --all also revoked ones)",
    mutates: false,
    input: z.object({ includeRevoked: z.boolean().default(false) }),
    async run(store, input) {
      return { members: (await store.listMembers(input.includeRevoked)).map(memberJson) };
    },
  }),
  createMember: action({
    name: "member.create",
    summary: "a member and its first gateway key (shown once)",
    mutates: true,
    input: z.object({ name: z.string().trim().min(1, "name is required").max(200) }),
    async run(store, input) {
      const { member, key } = await store.createMember(input.name);
      return { member: memberJson(member), key };
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
  memberUsage: action({
    name: "member.usage",
    summary: "runs and provider-reported tokens per member over a time range",
    mutates: false,
    input: z.object({ memberId: z.string().trim().default(""), since: timeBound, until: timeBound }),
    async run(store, input) {
      return { members: (await store.memberUsage({ memberId: input.memberId, since: input.since, until: input.until })).map(memberUsageJson) };
    },
  }),
} as const;

export type AdminActions = typeof ADMIN_ACTIONS;
export type AdminActionKey = keyof AdminActions;
export type ActionInput<K extends AdminActionKey> = z.input<AdminActions[K]["input"]>;
export type ActionResult<K extends AdminActionKey> = Awaited<ReturnType<AdminActions[K]["run"]>>;

/** The input did not match the action's schema (HTTP 400, CLI usage error). */
export class ActionInputError extends Error {
  override readonly name = "ActionInputError";
}

/** Validates `raw` against the action's input and runs it. */
export async function runAction<K extends AdminActionKey>(key: K, store: AdminStore, raw: unknown): Promise<ActionResult<K>> {
  const definition = ADMIN_ACTIONS[key] as unknown as AdminAction<z.ZodType, ActionResult<K>>;
  const parsed = definition.input.safeParse(raw ?? {});
  if (!parsed.success) throw new ActionInputError(parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; "));
  return definition.run(store, parsed.data);
}
