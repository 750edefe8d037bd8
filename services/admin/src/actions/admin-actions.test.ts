import { describe, expect, it } from "vitest";
import { CLI_COMMANDS } from "../cli/command-table.ts";
import { API_ROUTES } from "../http/api-routes.ts";
import { ADMIN_ACTIONS, type AdminActionKey } from "./admin-actions.ts";

describe("admin actions", () => {
  const keys = Object.keys(ADMIN_ACTIONS) as AdminActionKey[];

  it("every action is both an API route and a CLI command (CLI parity)", () => {
    for (const key of keys) {
      expect(API_ROUTES.filter((r) => r.action === key), `API route for ${key}`).not.toHaveLength(0);
      expect(CLI_COMMANDS.filter((c) => c.action === key && c.alias !== true), `CLI command for ${key}`).not.toHaveLength(0);
    }
    expect(API_ROUTES.map((r) => `${r.method} ${r.path}`)).toEqual([...new Set(API_ROUTES.map((r) => `${r.method} ${r.path}`))]);
  });

  it("an action that changes state is never a GET (so it needs the CSRF header with a session)", () => {
    for (const route of API_ROUTES) expect(route.method === "GET", `${route.method} ${route.path}`).toBe(!ADMIN_ACTIONS[route.action].mutates);
  });
});
