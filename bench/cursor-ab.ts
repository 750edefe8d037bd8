/**
 * Two builds of the gateway side by side: the Cursor path of another checkout
 * (BENCH_BASE) against this one, each as its own real multi-process deployment
 * (`npm start`, its own database and bus prefix) on the same mock upstream, in
 * blocks of turns that alternate between them (the order flips every block),
 * so that machine noise, which moves single runs of bench/cursor-path.ts by
 * more than most changes, hits both builds alike. Prints time to the first
 * text and to EndStream (p50 / p99) and CPU per turn of every process of each
 * deployment (its services and its Postgres backends; nats-server is shared
 * and left out). Nothing is asserted.
 *
 *   git worktree add /tmp/base main && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   BENCH_BASE=/tmp/base node bench/cursor-ab.ts
 *
 * Environment: BENCH_BASE (required: a checkout whose bench/support/deployment.ts
 * starts that build), BENCH_ARM (adapter: the fake Cursor client to the adapter;
 * proxy: through the edge proxy), BENCH_CONVERSATIONS (new: every turn starts a
 * conversation; continue: each build's turns continue one conversation),
 * BENCH_TURNS (300 per build), BENCH_BLOCK (10), BENCH_WARMUP (10 per build),
 * BENCH_CHUNKS (50 upstream text deltas per turn), BENCH_BASE_ENV and BENCH_THIS_ENV
 * (NAME=value pairs, space-separated, added to every service's environment of
 * that build: with BENCH_BASE=. the same build with two settings, e.g.
 * BENCH_THIS_ENV="NODE_OPTIONS=--max-semi-space-size=32").
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ADMIN_DATABASE_URL } from "@byok/test-support/infra";
import { startMockLlm } from "@byok/test-support/mock-llm";
import type { FakeConversation } from "@byok/test-support/fake-cursor";
import { GatewayArm, textStream } from "./support/cursor-arms.ts";
import { startDeployment, type Deployment } from "./support/deployment.ts";
import { ProcessSampler, cpuBetween, postgresBackends } from "./support/proc-stats.ts";
import { formatMachineSpeed, measureMachineSpeed } from "./support/machine-speed.ts";
import { formatAdded, formatMs, machineContext, percentile, renderTable } from "./support/report.ts";
import { intSetting } from "./support/settings.ts";

const PROMPT = "Say something.";

interface Build {
  readonly name: string;
  readonly deployment: Deployment;
  readonly arm: GatewayArm;
  /** The build's next turn: on a new conversation, or on its one conversation. */
  readonly chat: () => FakeConversation;
  readonly sampler: ProcessSampler;
  readonly ttft: number[];
  readonly end: number[];
  readonly cpu: Map<string, number>;
}

interface AbSettings {
  readonly base: string;
  readonly arm: "adapter" | "proxy";
  readonly continueConversation: boolean;
  readonly turns: number;
  readonly block: number;
  readonly warmup: number;
  readonly chunks: number;
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly thisEnv: Readonly<Record<string, string>>;
}

/** "A=1 B=two" -> { A: "1", B: "two" } (a value runs to the next space). */
function envPairs(name: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? "").split(" ").filter((p) => p !== "")) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new Error(`${name} must be NAME=value pairs separated by spaces, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

function readSettings(env: NodeJS.ProcessEnv): AbSettings {
  const base = env["BENCH_BASE"];
  if (base === undefined || base.trim() === "") throw new Error("BENCH_BASE must name the other checkout (see the header of bench/cursor-ab.ts)");
  const arm = env["BENCH_ARM"] ?? "adapter";
  if (arm !== "adapter" && arm !== "proxy") throw new Error(`BENCH_ARM must be adapter or proxy, got ${JSON.stringify(arm)}`);
  const conversations = env["BENCH_CONVERSATIONS"] ?? "new";
  if (conversations !== "new" && conversations !== "continue") throw new Error(`BENCH_CONVERSATIONS must be new or continue, got ${JSON.stringify(conversations)}`);
  return {
    base: resolve(base),
    arm,
    continueConversation: conversations === "continue",
    turns: intSetting("BENCH_TURNS", 300, { min: 1, max: 100_000 }, env),
    block: intSetting("BENCH_BLOCK", 10, { min: 1, max: 10_000 }, env),
    warmup: intSetting("BENCH_WARMUP", 10, { min: 0, max: 10_000 }, env),
    chunks: intSetting("BENCH_CHUNKS", 50, { min: 1, max: 10_000 }, env),
    baseEnv: envPairs("BENCH_BASE_ENV", env["BENCH_BASE_ENV"]),
    thisEnv: envPairs("BENCH_THIS_ENV", env["BENCH_THIS_ENV"]),
  };
}

async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const machine = machineContext();
  console.log(
    `cursor A/B: ${settings.base} (base) against this checkout, ${settings.turns} turns each in blocks of ${settings.block}, to the ${settings.arm === "proxy" ? "edge proxy" : "adapter"}, ${settings.continueConversation ? "one conversation per build" : "a new conversation per turn"}; base env ${JSON.stringify(settings.baseEnv)}, this env ${JSON.stringify(settings.thisEnv)}`,
  );
  console.log(`machine: ${machine.cores} cores (${machine.cpuModel}), load avg ${machine.loadAverage}; node ${machine.node}`);
  console.log(`machine speed at the start: ${formatMachineSpeed(await measureMachineSpeed())}`);
  const baseModule = (await import(pathToFileURL(resolve(settings.base, "bench/support/deployment.ts")).href)) as { startDeployment: typeof startDeployment };
  const llm = await startMockLlm();
  const builds: Build[] = [];
  try {
    for (const [name, start, env] of [
      ["base", baseModule.startDeployment, settings.baseEnv],
      ["this", startDeployment, settings.thisEnv],
    ] as const) {
      const deployment = await start(llm, { logLevel: "warn", env });
      const arm = settings.arm === "proxy" ? await GatewayArm.viaProxy(deployment, llm, 60_000) : GatewayArm.direct(deployment, llm, 60_000);
      const sampler = new ProcessSampler([
        ...Object.entries(deployment.services).map(([service, pid]) => ({ name: service, pids: async () => [pid] })),
        { name: "postgres backends", pids: () => postgresBackends(ADMIN_DATABASE_URL, deployment.db.name) },
      ]);
      const one = settings.continueConversation ? arm.conversation() : undefined;
      builds.push({ name, deployment, arm, chat: () => one ?? arm.conversation(), sampler, ttft: [], end: [], cpu: new Map() });
    }
    const burst = textStream(settings.chunks);
    for (let i = 0; i < settings.warmup; i++) for (const b of builds) await b.arm.turn(burst, b.chat(), PROMPT);
    const blocks = Math.ceil(settings.turns / settings.block);
    for (let k = 0; k < blocks; k++) {
      for (const b of k % 2 === 0 ? builds : [...builds].reverse()) {
        const before = await b.sampler.sample();
        for (let i = 0; i < settings.block; i++) {
          const t = await b.arm.turn(burst, b.chat(), PROMPT);
          b.ttft.push(t.firstTextMs);
          b.end.push(t.endMs);
        }
        const after = await b.sampler.sample();
        for (const [process, ms] of cpuBetween(before, after)) b.cpu.set(process, (b.cpu.get(process) ?? 0) + ms);
      }
    }
    const [base, head] = builds as [Build, Build];
    const row = (label: string, a: number, b: number): string[] => [label, formatMs(a), formatMs(b), formatAdded(b, a)];
    console.log(`\n## time (ms), ${base.ttft.length} turns per build`);
    console.log(
      renderTable(
        ["metric", "base", "this", "this - base"],
        [
          row("first text p50", percentile(base.ttft, 50), percentile(head.ttft, 50)),
          row("first text p99", percentile(base.ttft, 99), percentile(head.ttft, 99)),
          row("EndStream p50", percentile(base.end, 50), percentile(head.end, 50)),
          row("EndStream p99", percentile(base.end, 99), percentile(head.end, 99)),
        ],
      ),
    );
    console.log(`\n## CPU per turn (ms, /proc utime+stime; nats-server is shared by both and left out)`);
    const names = [...new Set([...base.cpu.keys(), ...head.cpu.keys()])];
    const perTurn = (b: Build, name: string): number => (b.cpu.get(name) ?? 0) / b.ttft.length;
    const rows = names.map((name) => row(name, perTurn(base, name), perTurn(head, name)));
    const total = (b: Build): number => names.reduce((sum, name) => sum + perTurn(b, name), 0);
    rows.push(row("total", total(base), total(head)));
    console.log(renderTable(["process", "base", "this", "this - base"], rows));
    console.log(`machine speed at the end: ${formatMachineSpeed(await measureMachineSpeed())}`);
  } finally {
    for (const b of builds) await b.arm.close().catch(() => undefined);
    for (const b of builds) await b.deployment.stop();
    await llm.stop();
  }
}

await main();
