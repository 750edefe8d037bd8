/**
 * Self time per function of the .cpuprofile files in a directory (written by
 * a bench run with BENCH_PROF_DIR=<dir>, see bench/support/deployment.ts),
 * one table per service (services.json maps names to pids; a profile is named
 * CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile).
 *
 *   node bench/cpu-profile-summary.ts <dir> [--top=25] [--service=store]
 *        [--skip-ms=8000] [--by=function|file] [--inclusive]
 *
 * --skip-ms leaves out each profile's first milliseconds (start-up: module
 * loading and compiling); --by=file sums self time per source file (or
 * package); --inclusive ranks functions by time with them on the stack;
 * --callers=<function> splits the self time of that function by the nearest
 * frame of the project's own code (services/, packages/) above it.
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

const ROOT = resolve(import.meta.dirname, "..");
const args = process.argv.slice(2);
const dir = args.find((a) => !a.startsWith("--"));
const opt = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
if (dir === undefined) throw new Error("usage: node bench/cpu-profile-summary.ts <dir> [--top=25] [--service=name] [--skip-ms=0] [--by=function|file] [--inclusive]");
const top = Number(opt("top") ?? 25);
const only = opt("service");
const skipMs = Number(opt("skip-ms") ?? 0);
const byFile = opt("by") === "file";
const inclusive = args.includes("--inclusive");
const callersOf = opt("callers");
const byPid = new Map<number, string>();
const servicesFile = join(dir, "services.json");
if (existsSync(servicesFile)) {
  for (const [name, pid] of Object.entries(JSON.parse(readFileSync(servicesFile, "utf8")) as Record<string, number>)) byPid.set(pid, name);
}

function where(url: string): string {
  if (url === "") return "";
  const path = url.startsWith("file://") ? url.slice(7) : url;
  const nm = path.lastIndexOf("node_modules/");
  if (nm >= 0) return path.slice(nm + 13);
  return path.startsWith("/") ? relative(ROOT, path) : path;
}

function keyOf(node: ProfileNode): string {
  const fn = node.callFrame.functionName || "(anonymous)";
  const file = where(node.callFrame.url);
  if (byFile) {
    if (file === "") return fn.startsWith("(") ? fn : "(native)";
    const pkg = file.startsWith("@") ? file.split("/").slice(0, 2).join("/") : file.includes("/") && !file.startsWith("services") && !file.startsWith("packages") && !file.startsWith("node:") ? file.split("/")[0]! : file;
    return pkg;
  }
  return `${fn} ${file}${file ? ":" + (node.callFrame.lineNumber + 1) : ""}`;
}

for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).sort()) {
  const pid = Number(file.split(".")[3]);
  const name = byPid.get(pid) ?? `pid ${pid}`;
  if (only !== undefined && name !== only) continue;
  const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let t = profile.startTime;
  const from = profile.startTime + skipMs * 1000;
  for (let i = 0; i < samples.length; i++) {
    t += deltas[i] ?? 0;
    if (t < from) continue;
    const us = deltas[i + 1] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + us);
  }
  const totals = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = nodes.get(id)!;
    const fn = node.callFrame.functionName;
    if (fn === "(idle)" || fn === "(program)") continue;
    busy += us;
    if (callersOf !== undefined) {
      if (fn !== callersOf) continue;
      let cur: number | undefined = id;
      while (cur !== undefined && !/^(services|packages|bench)\//.test(where(nodes.get(cur)!.callFrame.url))) cur = parent.get(cur);
      const key = cur === undefined ? "(no project frame)" : keyOf(nodes.get(cur)!);
      totals.set(key, (totals.get(key) ?? 0) + us);
      continue;
    }
    if (!inclusive) {
      const key = keyOf(node);
      totals.set(key, (totals.get(key) ?? 0) + us);
      continue;
    }
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const key = keyOf(nodes.get(cur)!);
      if (seen.has(key)) continue;
      seen.add(key);
      totals.set(key, (totals.get(key) ?? 0) + us);
    }
  }
  const wall = (profile.endTime - from) / 1000;
  console.log(`\n== ${name} (${file}): busy ${(busy / 1000).toFixed(0)} ms of ${wall.toFixed(0)} ms`);
  const rows = [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  for (const [key, us] of rows) console.log(`${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / Math.max(busy, 1)).toFixed(1).padStart(5)}%  ${key}`);
}
