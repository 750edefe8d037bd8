/**
 * Garbage-collector pauses of any Node process the benches start, loaded
 * into each of them through NODE_OPTIONS (V8's own trace flags are not
 * allowed there):
 *
 *   GC_WATCH_DIR=/tmp/gc NODE_OPTIONS="--import $PWD/bench/support/gc-watch.ts" node bench/cursor-path.ts
 *
 * When the process exits it writes one line to GC_WATCH_DIR/<pid>.txt: its
 * script, the count, total and p50 / p90 of its minor and major GC pauses,
 * and how much the old generation grew across the minor GCs (what they
 * promoted, roughly: objects made directly in the old generation count too).
 * GCs in the first GC_WATCH_SKIP_MS of the process (20,000: start-up and
 * warm-up) are left out. Without GC_WATCH_DIR it does nothing.
 */
import { writeFileSync } from "node:fs";
import { watchGcs } from "./heap-generations.ts";

const dir = process.env["GC_WATCH_DIR"];
if (dir !== undefined && dir !== "") watch(dir, Number(process.env["GC_WATCH_SKIP_MS"] ?? 20_000));

function watch(outDir: string, skipMs: number): void {
  const minor: number[] = [];
  const major: number[] = [];
  let promoted = 0;
  watchGcs((entry, step) => {
    if (entry.startTime < skipMs) return;
    (step.minor ? minor : major).push(entry.duration);
    promoted += step.promoted;
  });
  const script = (process.argv[1] ?? "node").split("/").slice(-3).join("/");
  process.on("exit", () => {
    writeFileSync(`${outDir}/${process.pid}.txt`, `${script}: minor ${summary(minor)}, promoted ${(promoted / 1_048_576).toFixed(1)} MB; major ${summary(major)}\n`);
  });
}

function summary(pauses: readonly number[]): string {
  const sorted = [...pauses].sort((a, b) => a - b);
  const at = (p: number): string => (sorted.length === 0 ? "-" : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number).toFixed(1));
  const total = sorted.reduce((sum, pause) => sum + pause, 0);
  return `${sorted.length} (${total.toFixed(0)} ms, p50 ${at(0.5)} ms, p90 ${at(0.9)} ms)`;
}
