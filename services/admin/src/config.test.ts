import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";

const TOKEN = "0123456789abcdef0123456789";

describe("admin service configuration", () => {
  it("needs an admin token of at least 24 characters, from ADMIN_TOKEN or a file", () => {
    expect(() => loadConfig({})).toThrow(/ADMIN_TOKEN .* is required/);
    expect(() => loadConfig({ ADMIN_TOKEN: "short" })).toThrow(/at least 24 characters/);
    expect(loadConfig({ ADMIN_TOKEN: TOKEN })).toMatchObject({ adminToken: TOKEN, host: "127.0.0.1", port: 8091 });
    expect(loadConfig({ ADMIN_TOKEN_FILE: "/run/token" }, () => `${TOKEN}\n`).adminToken).toBe(TOKEN);
    expect(() => loadConfig({ ADMIN_TOKEN: TOKEN, ADMIN_TOKEN_FILE: "/run/token" }, () => TOKEN)).toThrow(/not both/);
    expect(() => loadConfig({ ADMIN_TOKEN_FILE: "/nope" }, () => { throw new Error("ENOENT"); })).toThrow(/cannot read ADMIN_TOKEN_FILE \/nope: ENOENT/);
  });
});
