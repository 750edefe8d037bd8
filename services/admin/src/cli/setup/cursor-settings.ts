/**
 * The Cursor user settings that route Cursor through the gateway (HTTP proxy
 * with the member's key, proxy support on, HTTP/2 off, system certificates),
 * where Cursor keeps its settings.json on each OS, and applying them to that
 * file: a backup first, then only these keys changed (comments and every
 * other setting stay as they are; settings.json is JSON with comments).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { applyEdits, modify, parse, type ParseError } from "jsonc-parser";

export interface CursorSettingsInput {
  /** Proxy URL without credentials, e.g. http://gateway.example:8080. */
  proxyUrl: string;
  name: string;
  key: string;
}

export type CursorSettings = Readonly<Record<string, string | boolean>>;

export function cursorSettings(input: CursorSettingsInput): CursorSettings {
  const url = new URL(input.proxyUrl);
  url.username = encodeURIComponent(input.name);
  url.password = encodeURIComponent(input.key);
  return {
    "http.proxy": url.toString().replace(/\/$/, ""),
    "http.proxySupport": "on",
    "cursor.general.disableHttp2": true,
    "http.experimental.systemCertificatesV2": true,
  };
}

/** Cursor's user settings.json on this OS (undefined when the home directories are unknown). */
export function cursorSettingsPath(platform: NodeJS.Platform, env: Readonly<Record<string, string | undefined>>, home: string): string {
  switch (platform) {
    case "darwin":
      return join(home, "Library", "Application Support", "Cursor", "User", "settings.json");
    case "win32":
      return join(env["APPDATA"] ?? join(home, "AppData", "Roaming"), "Cursor", "User", "settings.json");
    default:
      return join(env["XDG_CONFIG_HOME"] || join(home, ".config"), "Cursor", "User", "settings.json");
  }
}

export type ApplyOutcome = { kind: "applied"; path: string; backup: string | undefined } | { kind: "unreadable"; path: string; message: string };

/** Sets `settings` in the settings file at `path` (created if missing), after copying it to `<path>.byok-backup-<time>`. */
export function applyCursorSettings(path: string, settings: CursorSettings, now = new Date()): ApplyOutcome {
  let text = "{}\n";
  let backup: string | undefined;
  if (existsSync(path)) {
    text = readFileSync(path, "utf8");
    const errors: ParseError[] = [];
    const current: unknown = parse(text, errors, { allowTrailingComma: true });
    if (errors.length > 0 || current === null || typeof current !== "object" || Array.isArray(current)) {
      return { kind: "unreadable", path, message: "not a JSON object (fix or move it, then run setup again)" };
    }
    backup = `${path}.byok-backup-${now.toISOString().replace(/[:.]/g, "-")}`;
    copyFileSync(path, backup);
  } else {
    mkdirSync(dirname(path), { recursive: true });
  }
  for (const [key, value] of Object.entries(settings)) {
    text = applyEdits(text, modify(text, [key], value, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" } }));
  }
  writeFileSync(path, text);
  return { kind: "applied", path, backup };
}
