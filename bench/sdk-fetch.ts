/**
 * What one streamed model call costs the provider gateway's SDK client, on the
 * runtime's global fetch against the gateway's own fetch (sdk-fetch.ts: undici's
 * dispatcher under a plain Response).
 *
 * Both arms are the official `openai` SDK streaming a chat completion from the
 * same upstream (bench/support/sse-upstream.ts, its own process, replaying the
 * recorded fixture openai-chat/openai-gpt4o-text-usage.sse), one call at a time,
 * each with its own AbortSignal and its body read to the end through a reader,
 * as the gateway's adapters call it. Each arm runs in a fresh child process (its
 * own heap, so what its minor GCs promote is its own), the arms alternating
 * BENCH_ROUNDS times. Printed per arm: CPU and wall time per call, minor GCs per
 * 1,000 calls and what they promoted per call. Nothing is asserted.
 *
 *   node bench/sdk-fetch.ts
 *   BENCH_CALLS=5000 BENCH_ROUNDS=3 node bench/sdk-fetch.ts
 *
 * Environment (all optional): BENCH_CALLS (3000 per arm and round, after
 * BENCH_WARMUP = 300), BENCH_ROUNDS (2).
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import OpenAI from "openai";
import { providerFixture } from "@byok/test-support/fixtures";
import { sdkFetch } from "@byok/provider-gateway/adapters/sdk-fetch";
import { watchGcs } from "./support/heap-generations.ts";
import { startHelper } from "./support/helper-process.ts";
import { machineContext, renderTable } from "./support/report.ts";
import { intSetting } from "./support/settings.ts";

const FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const ARMS = ["global fetch", "sdk-fetch.ts"] as const;
type Arm = (typeof ARMS)[number];

interface ArmResult {
  readonly calls: number;
  readonly cpuMsPerCall: number;
  readonly wallMsPerCall: number;
  readonly minorGcs: number;
  readonly promotedBytes: number;
}

/** Child: `calls` streamed calls on one arm after the warm-up; prints an ArmResult as JSON. */
async function runArm(arm: Arm, baseURL: string, warmup: number, calls: number): Promise<void> {
  const client = new OpenAI({ apiKey: "sk-bench", baseURL, maxRetries: 0, ...(arm === "sdk-fetch.ts" ? { fetch: sdkFetch } : {}) });
  const body = { model: "gpt-4o", messages: [{ role: "user" as const, content: "Say hello." }], stream: true as const, stream_options: { include_usage: true } };
  const call = async (): Promise<void> => {
    const controller = new AbortController();
    const response = await client.chat.completions.create(body, { signal: controller.signal }).asResponse();
    const reader = response.body!.getReader();
    while (!(await reader.read()).done);
  };
  for (let i = 0; i < warmup; i++) await call();

  let minorGcs = 0;
  let promotedBytes = 0;
  const stopWatching = watchGcs((_entry, step) => {
    if (!step.minor) return;
    minorGcs += 1;
    promotedBytes += step.promoted;
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await call();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  stopWatching();
  const result: ArmResult = { calls, cpuMsPerCall: (used.user + used.system) / 1000 / calls, wallMsPerCall: wallMs / calls, minorGcs, promotedBytes };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

function armProcess(arm: Arm, baseURL: string, warmup: number, calls: number): Promise<ArmResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [import.meta.filename, "--arm", arm, baseURL, String(warmup), String(calls)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as ArmResult) : reject(new Error(`the ${arm} arm exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  const calls = intSetting("BENCH_CALLS", 3_000, { min: 100, max: 1_000_000 });
  const warmup = intSetting("BENCH_WARMUP", 300, { min: 0, max: 100_000 });
  const rounds = intSetting("BENCH_ROUNDS", 2, { min: 1, max: 100 });
  const upstream = await startHelper("bench/support/sse-upstream.ts", FIXTURE);
  const baseURL = `http://127.0.0.1:${upstream.port}/v1`;
  const machine = machineContext();
  console.log("sdk fetch: one streamed chat completion at a time through the openai SDK, global fetch vs the gateway's sdk-fetch.ts");
  console.log(`machine: ${machine.cores} cores (${machine.cpuModel}), load avg ${machine.loadAverage}; node ${machine.node}`);
  console.log(`settings: ${calls} calls per arm and round after ${warmup} warm-up calls, ${rounds} rounds, arms alternating, each in a fresh process\n`);
  const results = new Map<Arm, ArmResult[]>(ARMS.map((arm) => [arm, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const arm of ARMS) results.get(arm)!.push(await armProcess(arm, baseURL, warmup, calls));
    }
  } finally {
    await upstream.stop();
  }
  const rows = ARMS.flatMap((arm) =>
    results.get(arm)!.map((r, round) => [
      arm,
      String(round + 1),
      r.cpuMsPerCall.toFixed(3),
      r.wallMsPerCall.toFixed(3),
      ((r.minorGcs * 1000) / r.calls).toFixed(1),
      (r.promotedBytes / r.calls / 1024).toFixed(2),
    ]),
  );
  console.log(renderTable(["arm", "round", "cpu ms / call", "wall ms / call", "minor GCs / 1000 calls", "promoted KiB / call"], rows));
  const mean = (arm: Arm, pick: (r: ArmResult) => number): number => {
    const list = results.get(arm)!;
    return list.reduce((sum, r) => sum + pick(r), 0) / list.length;
  };
  const [baseline, candidate] = ARMS;
  console.log(
    `\nmeans: cpu ${mean(baseline, (r) => r.cpuMsPerCall).toFixed(3)} -> ${mean(candidate, (r) => r.cpuMsPerCall).toFixed(3)} ms per call ` +
      `(${(mean(candidate, (r) => r.cpuMsPerCall) / mean(baseline, (r) => r.cpuMsPerCall)).toFixed(2)}x), ` +
      `wall ${mean(baseline, (r) => r.wallMsPerCall).toFixed(3)} -> ${mean(candidate, (r) => r.wallMsPerCall).toFixed(3)} ms per call, ` +
      `promoted ${(mean(baseline, (r) => r.promotedBytes / r.calls) / 1024).toFixed(2)} -> ${(mean(candidate, (r) => r.promotedBytes / r.calls) / 1024).toFixed(2)} KiB per call`,
  );
}

if (process.argv[2] === "--arm") {
  const [, , , arm, baseURL, warmup, calls] = process.argv;
  await runArm(arm as Arm, baseURL as string, Number(warmup), Number(calls));
} else {
  await main();
}
