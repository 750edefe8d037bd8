/**
 * What the provider gateway's HTTP front adds to a streamed request on the
 * same-shape path (an OpenAI Chat client on an openai-chat route).
 *
 * Baseline: the request straight to the upstream (bench/support/sse-upstream.ts,
 * its own process: the recorded fixture openai-chat/openai-gpt4o-text-usage.sse,
 * 34 SSE events written one by one, each once the previous one was handed to
 * the socket, as the tests' mock LLM sends it, but with nothing parsed or
 * recorded per request).
 * Gateway: the same request to /v1/chat/completions of a provider gateway
 * running as its own process (`node services/provider-gateway/src/main.ts`,
 * as in production), authenticated with a member key created in the real store
 * (its own process on a fresh database; the gateway caches verified keys and
 * charges every call through the ledger as in production) and relayed
 * to the same upstream. Bare relay: bench/support/bare-relay.ts (its own
 * process), the floor of a Node relay hop, in front of the same upstream.
 * The client runs in this process (node:http, a keep-alive agent, the first
 * token found in the raw bytes); all three arms use the same client and
 * upstream, on loopback, and alternate in rounds.
 *
 * Printed (never asserted): per concurrency level (1, 16, 64) p50 / p99 of
 * the time to the first token (first non-empty content delta) and to the last
 * byte, direct vs gateway and the added ms; then saturation throughput
 * (completed streamed requests per second at high concurrency for a fixed
 * time) with the CPU use of every process (client, upstream, relay, store,
 * Postgres, nats-server), the gateway's CPU time per
 * request and the rate one fully used gateway core would carry at that cost,
 * and one translated row (an Anthropic client on the same chat route) for
 * comparison.
 *
 *   npm run bench -- inbound
 *
 * Needs NATS and Postgres (NATS_URL, DATABASE_URL). Environment:
 * BENCH_ITERATIONS (1000 at concurrency 1, so that its p99 is the tenth slowest; levels run 20x their concurrency,
 * at least that), BENCH_WARMUP (2000 requests per arm, 8 at a time, before
 * anything is measured: the gateway's code is not yet optimized after a few
 * hundred, and its compiler threads then compete for the two cores), BENCH_LEVELS ("1,16,64"), BENCH_SATURATION_SECONDS (5),
 * BENCH_SATURATION_CONCURRENCY (128), BENCH_FIXTURE (the upstream's recorded
 * stream, default openai-gpt4o-text-usage.sse; openai-gpt41nano-text-usage-obfuscation.jsonl
 * is a current OpenAI stream: every chunk carries "usage":null and an obfuscation field).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { busNames } from "@byok/contracts";
import { freePort } from "@byok/local-infra/local-servers";
import { StoreClient, StoreFailure } from "@byok/store-client";
import { connect } from "@nats-io/transport-node";
import { ADMIN_DATABASE_URL, createTestBus, createTestDatabase } from "@byok/test-support/infra";
import { providerFixture } from "@byok/test-support/fixtures";
import { startHelper } from "./support/helper-process.ts";
import { runInFlight } from "./support/in-flight.ts";
import { cpuDuring, cpuSum, postgresBackends, ProcessSampler, trackedNatsServer } from "./support/proc-stats.ts";
import { formatMachineSpeed, measureMachineSpeed } from "./support/machine-speed.ts";
import { machineContext, percentile, renderTable } from "./support/report.ts";
import { intSetting } from "./support/settings.ts";

/** The upstream's answer: a recorded openai-chat stream (BENCH_FIXTURE, a file name in fixtures/providers/openai-chat/). */
const FIXTURE = providerFixture("openai-chat", process.env["BENCH_FIXTURE"] ?? "openai-gpt4o-text-usage.sse");
const MODEL = "bench-chat";

const ITERATIONS = intSetting("BENCH_ITERATIONS", 1000);
const WARMUP = intSetting("BENCH_WARMUP", 2000, { min: 0 });
const LEVELS = (process.env["BENCH_LEVELS"] ?? "1,16,64").split(",").map((v) => Number(v.trim()));
const SATURATION_SECONDS = intSetting("BENCH_SATURATION_SECONDS", 5);
const SATURATION_CONCURRENCY = intSetting("BENCH_SATURATION_CONCURRENCY", 128);

interface Sample {
  readonly firstTokenMs: number;
  readonly endMs: number;
}

interface Target {
  readonly name: string;
  readonly port: number;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
const CONTENT = Buffer.from('"content":"');
const TEXT = Buffer.from('"text":"');
const QUOTE = 0x22;

/** A first non-empty content (chat) or text (Anthropic) string in this chunk of the raw stream. */
function hasFirstToken(chunk: Buffer): boolean {
  for (const marker of [CONTENT, TEXT]) {
    for (let at = chunk.indexOf(marker); at !== -1; at = chunk.indexOf(marker, at + marker.length)) {
      const next = at + marker.length;
      if (next < chunk.length && chunk[next] !== QUOTE) return true;
    }
  }
  return false;
}

function once(target: Target): Promise<Sample> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: target.port, path: target.path, method: "POST", agent, headers: { "content-type": "application/json", ...target.headers } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`${target.name}: HTTP ${res.statusCode}`));
        res.resume();
        return;
      }
      let firstTokenMs: number | undefined;
      res.on("data", (chunk: Buffer) => {
        if (firstTokenMs === undefined && hasFirstToken(chunk)) firstTokenMs = performance.now() - started;
      });
      res.on("end", () => {
        const endMs = performance.now() - started;
        resolve({ firstTokenMs: firstTokenMs ?? endMs, endMs });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(target.body);
  });
}

function runLevel(target: Target, concurrency: number, count: number): Promise<Sample[]> {
  return runInFlight(count, concurrency, () => once(target));
}

async function saturate(target: Target, seconds: number, concurrency: number): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      await once(target);
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return done / ((performance.now() - started) / 1000);
}


async function waitReady(port: number, child: ChildProcess, memberKey: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: `Bearer ${memberKey}` } });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the gateway did not come up");
}

const ms = (v: number): string => v.toFixed(2);
const signed = (v: number): string => `${v >= 0 ? "+" : ""}${ms(v)}`;

/** BENCH_PROF_DIR: the store and gateway processes write a .cpuprofile there when they exit. */
function profileFlags(): string[] {
  const dir = process.env["BENCH_PROF_DIR"];
  return dir === undefined || dir === "" ? [] : ["--cpu-prof", "--cpu-prof-dir", dir];
}

/** BENCH_GATEWAY_NODE_FLAGS: extra node flags for the gateway process only (e.g. "--trace-gc"). */
function gatewayFlags(): string[] {
  const flags = process.env["BENCH_GATEWAY_NODE_FLAGS"] ?? "";
  return flags.split(" ").filter((flag) => flag !== "");
}

/** A member created through the store once it answers (it migrates its database first). */
async function benchMemberKey(client: StoreClient, store: ChildProcess): Promise<string> {
  for (let i = 0; i < 300; i++) {
    if (store.exitCode !== null) throw new Error(`the store exited with ${store.exitCode}`);
    try {
      return (await client.createMember("bench-member")).key;
    } catch (error) {
      if (!(error instanceof StoreFailure) || error.kind !== "unavailable") throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the store did not come up");
}

async function main(): Promise<void> {
  const bus = createTestBus();
  const upstream = await startHelper("bench/support/sse-upstream.ts", FIXTURE);
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  const nc = await connect({ servers: bus.natsUrl });
  // The real store (its own process, a fresh database): member keys, policies and the ledger,
  // as every production request meets them.
  const db = await createTestDatabase();
  const store = spawn(process.execPath, [...profileFlags(), "services/store/src/main.ts"], {
    env: { ...process.env, DATABASE_URL: db.url, NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, LOG_LEVEL: "warn", METRICS_PORT: "0" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const memberKey = await benchMemberKey(new StoreClient(nc, busNames(bus.prefix), { timeoutMs: 10_000 }), store);
  const dir = await mkdtemp(join(tmpdir(), "inbound-bench-"));
  const configPath = join(dir, "gateway.json");
  await writeFile(
    configPath,
    JSON.stringify({
      providers: { mock: { kind: "openai-chat", baseUrl: `${upstreamUrl}/v1`, apiKeyEnv: "BENCH_PROVIDER_KEY", maxAttempts: 1 } },
      models: [{ id: MODEL, displayName: "Bench chat", provider: "mock", upstreamModel: "gpt-4o" }],
    }),
  );
  const port = await freePort();
  const child = spawn(process.execPath, [...profileFlags(), ...gatewayFlags(), "services/provider-gateway/src/main.ts"], {
    env: { ...process.env, NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, GATEWAY_CONFIG: configPath, BENCH_PROVIDER_KEY: "sk-bench", INBOUND_PORT: String(port), LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const bareRelay = await startHelper("bench/support/bare-relay.ts", upstreamUrl);
  try {
    await waitReady(port, child, memberKey);
    const body = JSON.stringify({ model: MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "What's the weather in San Francisco right now?" }] });
    const direct: Target = { name: "direct", port: upstream.port, path: "/v1/chat/completions", headers: { authorization: "Bearer sk-bench" }, body: body.replace(MODEL, "gpt-4o") };
    const bare: Target = { ...direct, name: "bare relay", port: bareRelay.port };
    const gateway: Target = { name: "gateway", port, path: "/v1/chat/completions", headers: { authorization: `Bearer ${memberKey}` }, body };
    const translated: Target = {
      name: "translated",
      port,
      path: "/v1/messages",
      headers: { "x-api-key": memberKey, "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: MODEL, stream: true, max_tokens: 512, messages: [{ role: "user", content: "What's the weather in San Francisco right now?" }] }),
    };

    for (const target of [direct, bare, gateway, translated]) await runLevel(target, 8, WARMUP);
    const machine = machineContext();
    console.log(`\ninbound-overhead: same-shape chat streaming, ${machine.cores} cores (${machine.cpuModel}), Node ${machine.node}, load ${machine.loadAverage}`);
    console.log(`machine speed at the start: ${formatMachineSpeed(await measureMachineSpeed())}`);
    const rows: string[][] = [];
    for (const level of LEVELS) {
      const count = level === 1 ? ITERATIONS : Math.max(ITERATIONS, level * 20);
      const d: Sample[] = [];
      const g: Sample[] = [];
      const b: Sample[] = [];
      // Alternate in rounds so machine noise hits every arm alike.
      for (let round = 0; round < 4; round++) {
        d.push(...(await runLevel(direct, level, Math.ceil(count / 4))));
        g.push(...(await runLevel(gateway, level, Math.ceil(count / 4))));
        b.push(...(await runLevel(bare, level, Math.ceil(count / 4))));
      }
      for (const [metric, pick] of [["first token", (s: Sample) => s.firstTokenMs], ["last byte", (s: Sample) => s.endMs]] as const) {
        for (const p of [50, 99]) {
          const base = percentile(d.map(pick), p);
          const cand = percentile(g.map(pick), p);
          const floor = percentile(b.map(pick), p);
          rows.push([String(level), `${metric} p${p}`, ms(base), ms(cand), signed(cand - base), ms(floor), signed(floor - base)]);
        }
      }
      // How often the tail happens, which a p99 alone does not say: requests slower than the direct p50 + 3 ms.
      const slowBound = percentile(d.map((s) => s.firstTokenMs), 50) + 3;
      const slowShare = (samples: readonly Sample[]): string => `${((samples.filter((s) => s.firstTokenMs > slowBound).length / samples.length) * 100).toFixed(1)}%`;
      rows.push([String(level), "first token > direct p50 + 3 ms", slowShare(d), slowShare(g), "", slowShare(b), ""]);
    }
    console.log(renderTable(["concurrency", "metric", "direct ms", "gateway ms", "gateway added ms", "bare relay ms", "bare relay added ms"], rows));

    const t1 = await runLevel(translated, 1, ITERATIONS);
    const d1 = await runLevel(direct, 1, ITERATIONS);
    console.log(
      `\ntranslated (Anthropic client -> chat route), concurrency 1: first token p50 ${ms(percentile(t1.map((s) => s.firstTokenMs), 50))} ms (direct ${ms(percentile(d1.map((s) => s.firstTokenMs), 50))}), last byte p50 ${ms(percentile(t1.map((s) => s.endMs), 50))} ms (direct ${ms(percentile(d1.map((s) => s.endMs), 50))})`,
    );

    const sampler = new ProcessSampler([
      { name: "upstream", pids: async () => [upstream.pid] },
      { name: "gateway", pids: async () => [child.pid as number] },
      { name: "bare relay", pids: async () => [bareRelay.pid] },
      { name: "store", pids: async () => [store.pid as number] },
      { name: "postgres", pids: () => postgresBackends(ADMIN_DATABASE_URL, db.name) },
      ...trackedNatsServer(bus.natsUrl, "nats-server"),
    ]);
    const satRows: string[][] = [];
    for (const target of [direct, bare, gateway]) {
      const phase = await cpuDuring(sampler, async () => {
        const wallBefore = performance.now();
        const rate = await saturate(target, SATURATION_SECONDS, SATURATION_CONCURRENCY);
        return { rate, wall: (performance.now() - wallBefore) / 1000 };
      });
      const { rate, wall } = phase.result;
      const used = phase.cpu;
      const selfPct = (phase.selfMs / 1000 / wall) * 100;
      const pct = (name: string): string => `${(((used.get(name) ?? 0) / 1000 / wall) * 100).toFixed(0)}%`;
      const perReq = (names: readonly string[]): string => {
        if (target === direct || rate <= 0) return "-";
        return (cpuSum(used, names) / (rate * wall)).toFixed(3);
      };
      const gatewayMs = perReq([target === bare ? "bare relay" : "gateway"]);
      satRows.push([
        target.name,
        rate.toFixed(0),
        `${selfPct.toFixed(0)}%`,
        pct("upstream"),
        pct(target === bare ? "bare relay" : "gateway"),
        pct("store"),
        pct("postgres"),
        pct("nats-server"),
        gatewayMs,
        target === bare ? gatewayMs : perReq(["gateway", "store", "postgres", "nats-server"]),
        gatewayMs === "-" ? "-" : (1000 / Number(gatewayMs)).toFixed(0),
      ]);
    }
    console.log(`\nsaturation: ${SATURATION_CONCURRENCY} concurrent streamed requests for ${SATURATION_SECONDS} s each; CPU of each process over the phase`);
    console.log(
      renderTable(["target", "requests/s", "client", "upstream", "relay process", "store", "postgres", "nats-server", "relay CPU ms/req", "all relay-side CPU ms/req", "req/s per relay core"], satRows),
    );
    console.log("(every process shares the machine's cores: the rate is bounded by the CPU all of them need per request; the store, Postgres");
    console.log(" and nats-server columns are the ledger and key checks the gateway causes; nats-server and Postgres count whatever else uses them)");
    console.log(`load average at the end: ${machineContext().loadAverage}; machine speed: ${formatMachineSpeed(await measureMachineSpeed())}`);
  } finally {
    await bareRelay.stop();
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    store.kill("SIGTERM");
    await new Promise((resolve) => store.once("exit", resolve));
    await db.drop();
    agent.destroy();
    await nc.close();
    await upstream.stop();
    await bus.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
