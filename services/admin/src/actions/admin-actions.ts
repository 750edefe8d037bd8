/**
 * Every admin action, once: its input (a zod schema: what the API body/query
 * and the CLI flags must turn into) and what it does through the store. The
 * HTTP API (http/api-routes.ts) and the CLI (cli/command-table.ts) are two
 * doors to this table, so an action exists in both or in neither
 * (admin-actions.test.ts checks it). Results are the JSON shapes of
 * admin-json.ts. Every change an action makes is audited by the store itself,
 * in the same transaction (migration 4).
 */
import type { z } from "zod";
import type { AdminAction, AdminStore } from "./admin-action.ts";
import { MEMBER_ACTIONS } from "./member-actions.ts";
import { REPORT_ACTIONS } from "./report-actions.ts";
import { TEAM_ACTIONS } from "./team-actions.ts";

export type { AdminAction, AdminStore } from "./admin-action.ts";

export const ADMIN_ACTIONS = { ...MEMBER_ACTIONS, ...TEAM_ACTIONS, ...REPORT_ACTIONS } as const;

export type AdminActions = typeof ADMIN_ACTIONS;
export type AdminActionKey = keyof AdminActions;
export type ActionResult<K extends AdminActionKey> = Awaited<ReturnType<AdminActions[K]["run"]>>;

/** The input did not match the action's schema (HTTP 400, CLI usage error). */
export class ActionInputError extends Error {
  override readonly name = "ActionInputError";
}

/** Validates `raw` against the action's input and runs it. */
export async function runAction<K extends AdminActionKey>(key: K, store: AdminStore, raw: unknown, now: Date = new Date()): Promise<ActionResult<K>> {
  const definition = ADMIN_ACTIONS[key] as unknown as AdminAction<z.ZodType, ActionResult<K>>;
  const parsed = definition.input.safeParse(raw ?? {});
  if (!parsed.success) throw new ActionInputError(parsed.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`).join("; "));
  return definition.run(store, parsed.data, now);
}
