/**
 * The fuzz targets of the unit suite (services/edge-proxy and
 * services/cursor-adapter fuzz-targets.ts) on BENCH_FUZZ_RUNS inputs in all
 * (default 1,000,000, shared evenly by the targets): prints per target the
 * crashes (target 0, with the first crashing inputs), the slowest input and
 * the time it took, and the inputs per second; then the totals and the slowest
 * input of all. No infrastructure needed. Exits 1 when anything crashed.
 *
 *   npm run bench -- fuzz
 *   BENCH_FUZZ_RUNS=100000 BENCH_FUZZ_SEED=7 BENCH_FUZZ_FILTER=blob npm run bench -- fuzz
 */
import { cursorAdapterFuzzTargets } from "@byok/cursor-adapter/testing/fuzz-targets";
import { edgeProxyFuzzTargets } from "@byok/edge-proxy/test-support/fuzz-targets";
import type { FuzzReport } from "@byok/test-support/fuzz";

const total = Number(process.env["BENCH_FUZZ_RUNS"] ?? 1_000_000);
const seed = Number(process.env["BENCH_FUZZ_SEED"] ?? Date.now() % 1_000_000);
const filter = process.env["BENCH_FUZZ_FILTER"] ?? "";
const targets = [...edgeProxyFuzzTargets, ...cursorAdapterFuzzTargets].filter((t) => t.name.includes(filter));

const runs = Math.ceil(total / Math.max(1, targets.length));
console.log(`fuzz: ${targets.length} targets x ${runs.toLocaleString("en")} inputs, seed ${seed} (BENCH_FUZZ_RUNS, BENCH_FUZZ_SEED, BENCH_FUZZ_FILTER)`);
const reports: FuzzReport[] = [];
for (const target of targets) {
  const report = await target.run(runs, seed);
  reports.push(report);
  const perSecond = Math.round(report.runs / (report.wallMs / 1000));
  console.log(`\n${report.name}`);
  console.log(`  inputs ${report.runs.toLocaleString("en")}, crashes ${report.crashes}, ${perSecond.toLocaleString("en")} inputs/s (checks ${(report.checkMs / 1000).toFixed(1)} s of ${(report.wallMs / 1000).toFixed(1)} s)`);
  console.log(`  slowest input: ${report.slowest.ms.toFixed(2)} ms (alone again: ${report.slowest.rerunMs.toFixed(2)} ms): ${report.slowest.input}`);
  for (const crash of report.examples) console.log(`  crash: ${crash.input}\n    ${crash.error.replaceAll("\n", "\n    ")}`);
}
const crashes = reports.reduce((n, r) => n + r.crashes, 0);
const slowest = reports.reduce((a, b) => (b.slowest.ms > a.slowest.ms ? b : a), reports[0]!);
console.log(`\nfuzz: ${crashes} crashes in ${reports.reduce((n, r) => n + r.runs, 0).toLocaleString("en")} inputs (target 0)`);
console.log(`fuzz: slowest input ${slowest.slowest.ms.toFixed(2)} ms (alone again: ${slowest.slowest.rerunMs.toFixed(2)} ms; ${slowest.name}): ${slowest.slowest.input}`);
process.exit(crashes === 0 ? 0 : 1);
