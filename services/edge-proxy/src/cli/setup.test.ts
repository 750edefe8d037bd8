import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCommandConfig } from "../config.ts";
import { cursorSettings, runSetup } from "./setup.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function capture(): { io: { out(t: string): void; err(t: string): void }; out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return { io: { out: (t) => (out += t), err: (t) => (err += t) }, out: () => out, err: () => err };
}

describe("setup", () => {
  it("builds the five-part Cursor proxy configuration with the key in the proxy URL", () => {
    expect(cursorSettings({ proxyUrl: "http://gw.example:8080", name: "alice", key: "k/ey:1" })).toEqual({
      "http.proxy": "http://alice:k%2Fey%3A1@gw.example:8080",
      "http.proxySupport": "on",
      "cursor.general.disableHttp2": true,
      "http.experimental.systemCertificatesV2": true,
    });
  });

  it("prints the settings and writes the team CA certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-setup-"));
    dirs.push(dir);
    const config = loadCommandConfig({ CA_DIR: join(dir, "ca"), PROXY_PORT: "3128" });
    const c = capture();
    const code = await runSetup(["--key", "secret-key", "--name", "alice", "--out", join(dir, "team-ca.crt")], config, c.io);
    expect(code).toBe(0);
    const settings = JSON.parse(/\{[\s\S]*?\n\}/.exec(c.out())?.[0] ?? "{}") as Record<string, unknown>;
    expect(settings["http.proxy"]).toBe("http://alice:secret-key@127.0.0.1:3128");
    expect(settings["cursor.general.disableHttp2"]).toBe(true);
    expect(readFileSync(join(dir, "team-ca.crt"), "utf8")).toBe(readFileSync(join(dir, "ca", "ca.crt"), "utf8"));
    expect(c.out()).toMatch(/SHA-256 fingerprint: ([0-9A-F]{2}:){31}[0-9A-F]{2}/);
  });

  it("refuses to run without a key, or without a reachable proxy address", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-setup-"));
    dirs.push(dir);
    const c = capture();
    expect(await runSetup([], loadCommandConfig({ CA_DIR: join(dir, "ca") }), c.io)).toBe(2);
    expect(c.err()).toMatch(/--key is required/);
    const d = capture();
    expect(await runSetup(["--key", "k"], loadCommandConfig({ CA_DIR: join(dir, "ca"), PROXY_HOST: "0.0.0.0" }), d.io)).toBe(2);
    expect(d.err()).toMatch(/--proxy-url/);
  });
});
