// Generates TypeScript from proto/ with buf + protoc-gen-es.
//   node scripts/gen-proto.ts          write packages/*/src/gen
//   node scripts/gen-proto.ts --check  fail when the committed code is stale
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const targets = [
  { protoPath: "proto/byok", out: "packages/contracts/src/gen" },
  { protoPath: "proto/cursor", out: "packages/cursor-protocol/src/gen" },
];
const check = process.argv.includes("--check");
const bin = (name: string) => join(root, "node_modules/.bin", name);

function generate(protoPath: string, out: string): void {
  const template = JSON.stringify({
    version: "v2",
    plugins: [{ local: bin("protoc-gen-es"), out, opt: ["target=js+dts", "import_extension=js"] }],
  });
  execFileSync(bin("buf"), ["generate", "--template", template, "--path", protoPath], { cwd: root, stdio: "inherit" });
}

function listFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.push(relative(dir, p));
    }
  };
  try {
    walk(dir);
  } catch {
    return [];
  }
  return files.sort();
}

if (!check) {
  for (const t of targets) {
    rmSync(join(root, t.out), { recursive: true, force: true });
    generate(t.protoPath, t.out);
  }
  process.exit(0);
}

const scratch = mkdtempSync(join(tmpdir(), "byok-gen-"));
const stale: string[] = [];
try {
  for (const t of targets) {
    const out = join(scratch, t.out);
    generate(t.protoPath, out);
    const fresh = listFiles(out);
    const committed = listFiles(join(root, t.out));
    const names = new Set([...fresh, ...committed]);
    for (const name of names) {
      const a = fresh.includes(name) ? readFileSync(join(out, name), "utf8") : null;
      const b = committed.includes(name) ? readFileSync(join(root, t.out, name), "utf8") : null;
      if (a !== b) stale.push(join(t.out, name));
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (stale.length > 0) {
  console.error(`generated protobuf code is stale (run \`npm run gen\`):\n  ${stale.join("\n  ")}`);
  process.exit(1);
}
console.log("generated protobuf code is up to date");
