import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { afterEach, describe, expect, it } from "vitest";
import { applyCursorSettings, cursorSettings, cursorSettingsPath } from "./cursor-settings.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("Cursor settings", () => {
  it("are the proxy with the key in its URL, proxy support on, HTTP/2 off and system certificates", () => {
    expect(cursorSettings({ proxyUrl: "http://gw.example:8080", name: "alice", key: "k/ey:1" })).toEqual({
      "http.proxy": "http://alice:k%2Fey%3A1@gw.example:8080",
      "http.proxySupport": "on",
      "cursor.general.disableHttp2": true,
      "http.experimental.systemCertificatesV2": true,
    });
  });

  it("live in Cursor's settings.json for each OS", () => {
    expect(cursorSettingsPath("linux", {}, "/home/m")).toBe("/home/m/.config/Cursor/User/settings.json");
    expect(cursorSettingsPath("darwin", {}, "/Users/m")).toBe("/Users/m/Library/Application Support/Cursor/User/settings.json");
    expect(cursorSettingsPath("win32", { APPDATA: "C:/Users/m/AppData/Roaming" }, "C:/Users/m")).toBe(join("C:/Users/m/AppData/Roaming", "Cursor", "User", "settings.json"));
  });

  it("are applied after a backup, keeping comments and every other setting", () => {
    const dir = mkdtempSync(join(tmpdir(), "cursor-settings-"));
    dirs.push(dir);
    const path = join(dir, "settings.json");
    const original = '{\n  // my editor\n  "editor.fontSize": 14,\n  "http.proxy": "http://old:1",\n}\n';
    writeFileSync(path, original);
    const outcome = applyCursorSettings(path, cursorSettings({ proxyUrl: "http://gw:8080", name: "alice", key: "k" }), new Date("2026-01-01T00:00:00Z"));
    expect(outcome).toEqual({ kind: "applied", path, backup: `${path}.byok-backup-2026-01-01T00-00-00-000Z` });
    expect(readFileSync(`${path}.byok-backup-2026-01-01T00-00-00-000Z`, "utf8")).toBe(original);
    const text = readFileSync(path, "utf8");
    expect(text).toContain("// my editor");
    expect(parse(text)).toEqual({
      "editor.fontSize": 14,
      "http.proxy": "http://alice:k@gw:8080",
      "http.proxySupport": "on",
      "cursor.general.disableHttp2": true,
      "http.experimental.systemCertificatesV2": true,
    });
  });

  it("creates a missing settings file, and refuses one that is not a JSON object (leaving it alone)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cursor-settings-"));
    dirs.push(dir);
    const fresh = join(dir, "User", "settings.json");
    expect(applyCursorSettings(fresh, { "http.proxySupport": "on" })).toMatchObject({ kind: "applied", backup: undefined });
    expect(parse(readFileSync(fresh, "utf8"))).toEqual({ "http.proxySupport": "on" });
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "[1, 2");
    expect(applyCursorSettings(broken, { "http.proxySupport": "on" }).kind).toBe("unreadable");
    expect(readFileSync(broken, "utf8")).toBe("[1, 2");
    expect(readdirSync(dir).filter((f) => f.includes("byok-backup"))).toEqual([]);
    expect(existsSync(join(dir, "broken.json"))).toBe(true);
  });
});
