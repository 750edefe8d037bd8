/**
 * `npm run setup` on a member's machine, against a real edge proxy: the key
 * and the team CA are checked through the proxy before anything is printed,
 * the CA lands in the member's config directory (never the repository), and
 * --apply-cursor-settings edits Cursor's settings.json after a backup.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "@byok/platform";
import { loadConfig } from "../services/edge-proxy/src/config.ts";
import type { MemberDirectory } from "../services/edge-proxy/src/member-store.ts";
import { startEdgeProxy, type EdgeProxy } from "../services/edge-proxy/src/service.ts";
import { ROOT } from "./start-support.ts";

const run = promisify(execFile);
const KEY = "alice-gateway-key";
const directory: MemberDirectory = { verifyKey: async (key) => (key === KEY ? { kind: "member", memberId: "m-alice" } : { kind: "unknown" }) };

let dir: string;
let proxy: EdgeProxy;
let other: EdgeProxy;

async function setup(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"], HOME: join(dir, "home"), DATA_DIR: join(dir, "no-gateway-here") };
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, "services/admin/src/cli/setup/main.ts"), ...args], { env, timeout: 30_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, out: e.stdout ?? "", err: e.stderr ?? "" };
  }
}

function repoFiles(): string[] {
  return readdirSync(ROOT).sort();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "byok-setup-"));
  const gatewayFile = (): string => JSON.stringify({ providers: { p: { kind: "openai-chat", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "KEY" } }, models: [{ id: "m", displayName: "M", provider: "p", upstreamModel: "m" }] });
  const start = (name: string) =>
    startEdgeProxy(loadConfig({ PROXY_PORT: "0", CA_DIR: join(dir, name), UPSTREAM_ORIGIN: "http://127.0.0.1:9", ADAPTER_URL: "http://127.0.0.1:9" }, gatewayFile), {
      log: silentLogger(),
      members: directory,
    });
  proxy = await start("ca");
  other = await start("other-ca");
});

afterAll(async () => {
  await proxy?.stop();
  await other?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("member setup", () => {
  it("checks the key through the proxy, saves the CA in the member's config directory and prints the settings and trust command", async () => {
    const before = repoFiles();
    const r = await setup(["--gateway", proxy.url, "--key", KEY, "--name", "alice"]);
    expect(r.code, r.err).toBe(0);
    const caPath = join(dir, "home", ".config", "byok-gateway", "ca.crt");
    expect(readFileSync(caPath, "utf8")).toBe(proxy.caCertPem);
    expect(r.out).toContain(`its team CA (SHA-256 `);
    const settings = JSON.parse(/\{[\s\S]*?\n\}/.exec(r.out)?.[0] ?? "{}") as Record<string, unknown>;
    expect(settings["http.proxy"]).toBe(`http://alice:${KEY}@${new URL(proxy.url).host}`);
    expect(r.out).toMatch(/update-ca-certificates|update-ca-trust|trust store/);
    expect(repoFiles()).toEqual(before);
  });

  it("refuses a wrong key before printing anything", async () => {
    const r = await setup(["--gateway", proxy.url, "--key", "not-a-key"]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/refused this key \(HTTP 407\)/);
  });

  it("refuses a CA that is not the proxy's (another gateway's --ca-url)", async () => {
    const r = await setup(["--gateway", proxy.url, "--key", KEY, "--ca-url", `${other.url}/ca.crt`]);
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/not signed by this CA/);
  });

  it("says which address it could not reach", async () => {
    const r = await setup(["--gateway", "http://127.0.0.1:1", "--key", KEY]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot download http:\/\/127\.0\.0\.1:1\/ca\.crt/);
  });

  it("applies the Cursor settings with --apply-cursor-settings, keeping a backup of settings.json", async () => {
    const settingsPath = join(dir, "cursor-settings.json");
    writeFileSync(settingsPath, '{ "editor.fontSize": 13 }\n');
    const r = await setup(["--gateway", proxy.url, "--key", KEY, "--name", "alice", "--apply-cursor-settings", "--cursor-settings", settingsPath]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/Cursor settings written to .*cursor-settings\.json \(previous file: .*byok-backup/);
    const written = JSON.parse(readFileSync(settingsPath, "utf8")) as Record<string, unknown>;
    expect(written).toMatchObject({ "editor.fontSize": 13, "http.proxySupport": "on", "cursor.general.disableHttp2": true });
    expect(readdirSync(dir).some((f) => f.startsWith("cursor-settings.json.byok-backup-"))).toBe(true);
    expect(existsSync(join(ROOT, "byok-gateway-ca.crt"))).toBe(false);
  });
});
