/**
 * Nothing outside the ACP adapter and the member-side bridge knows ACP: no
 * manifest depends on the ACP SDK but the adapter's (and this test
 * workspace's, whose tests/acp-*.ts play the editor); no source imports it but
 * the adapter's ACP types module and those tests; no other code reaches into
 * the adapter past its entry modules; and the services that never learn a
 * client protocol (run worker, provider gateway, store) and the shared
 * packages name no ACP method or update. Lint (eslint.config.js) enforces the
 * import rule as code is written; this test checks the whole tree, manifests
 * included.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../", import.meta.url).pathname;
const SDK = "@agentclientprotocol/sdk";
const ACP_TYPES_MODULE = "services/acp-adapter/src/acp/acp-types.ts";

function files(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      if (name === "node_modules" || name === "gen" || name.startsWith(".")) continue;
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (keep(path)) out.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, dir));
  return out;
}

const sources = ["packages", "services", "scripts", "bench", "tests"].flatMap((dir) => files(dir, (p) => p.endsWith(".ts")));
const manifests = ["packages", "services", "tests"].flatMap((dir) => files(dir, (p) => p.endsWith("package.json")));
const isEditorTest = (path: string) => /^tests\/acp-[^/]+\.ts$/.test(path);
const importsOf = (text: string) => [...text.matchAll(/(?:import|export)[^"';]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2] ?? "");

describe("the ACP boundary", () => {
  it("has the ACP SDK only in the adapter's manifest (and the editor tests')", () => {
    const depending = manifests.filter((m) => {
      const manifest = JSON.parse(readFileSync(join(ROOT, m), "utf8")) as Record<string, Record<string, string> | undefined>;
      return ["dependencies", "devDependencies", "peerDependencies"].some((field) => manifest[field]?.[SDK] !== undefined);
    });
    expect(depending.sort()).toEqual(["services/acp-adapter/package.json", "tests/package.json"]);
  });

  it("imports the ACP SDK only in the adapter's ACP types module and the editor tests", () => {
    const importing = sources.filter((s) => importsOf(readFileSync(join(ROOT, s), "utf8")).some((spec) => spec === SDK || spec.startsWith(`${SDK}/`)));
    expect(importing.filter((s) => s !== ACP_TYPES_MODULE && !isEditorTest(s))).toEqual([]);
    expect(importing).toContain(ACP_TYPES_MODULE);
  });

  it("lets other code reach the adapter only through its entry modules", () => {
    const reaching = sources
      .filter((s) => !s.startsWith("services/acp-adapter/"))
      .flatMap((s) => importsOf(readFileSync(join(ROOT, s), "utf8")).filter((spec) => spec.startsWith("@byok/acp-adapter")).map((spec) => `${s}: ${spec}`));
    expect(reaching.filter((r) => !/: @byok\/acp-adapter(\/config|\/service)?$/.test(r))).toEqual([]);
  });

  it("leaves ACP out of the run worker, the provider gateway, the store and the shared packages", () => {
    const protocolFree = sources.filter((s) => /^(services\/(run-worker|provider-gateway|store)|packages\/(contracts|platform|run-client|store-client|model-stream))\//.test(s));
    expect(protocolFree.length).toBeGreaterThan(20);
    const acpWords = /session\/(prompt|update|load|new|request_permission)|tool_call_update|agent_message_chunk|fs\/(read|write)_text_file|terminal\/create|@byok\/acp-/;
    expect(protocolFree.filter((s) => acpWords.test(readFileSync(join(ROOT, s), "utf8")))).toEqual([]);
  });
});
