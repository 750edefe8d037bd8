/**
 * Runs every benchmark file in bench/ (each `*.ts` next to this one but the
 * by-hand tools below), one after the other in its own Node process, so only
 * one heavy process runs at a time.
 *
 *   npm run bench                      # all of them
 *   npm run bench -- gateway-overhead  # only files whose name contains an argument
 *
 * Settings reach the benches through the environment (e.g. BENCH_ITERATIONS).
 * Exits non-zero when a bench fails.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const benchDir = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);

/** Not benches on their own: they read another run's output or need another checkout, so they are run by hand. */
const BY_HAND = new Set(["run.ts", "cpu-profile-summary.ts", "cursor-ab.ts"]);

const files = readdirSync(benchDir)
  .filter((name) => name.endsWith(".ts") && !BY_HAND.has(name))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort();

if (files.length === 0) {
  console.error(`no bench file in ${benchDir} matches ${filters.join(", ") || "*.ts"}`);
  process.exit(1);
}

function runFile(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(benchDir, file)], { stdio: "inherit" });
    child.once("error", (err) => {
      console.error(`could not start ${file}: ${err.message}`);
      resolve(1);
    });
    child.once("exit", (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

// The children get Ctrl-C from the terminal themselves and clean up; this process only waits for them.
process.on("SIGINT", () => undefined);

const failures: string[] = [];
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const code = await runFile(file);
  if (code !== 0) failures.push(`${file} (exit ${code})`);
}
if (failures.length > 0) {
  console.error(`\nfailed: ${failures.join(", ")}`);
  process.exitCode = 1;
}
