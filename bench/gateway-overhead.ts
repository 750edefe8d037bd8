/**
 * What the gateway adds to one Cursor agent turn.
 *
 * Baseline: the official `openai` SDK streams a chat completion straight from
 * the mock LLM (recorded fixture openai-chat/openai-gpt4o-text-usage.sse).
 * Gateway: the fake Cursor client runs one text turn (RunSSE + BidiAppend, KV
 * ACKs, checkpoints) on the harness BYOK model, served by the whole gateway
 * in-process (store + provider gateway + run worker + cursor adapter on real
 * Postgres/NATS) with the same mock and fixture upstream.
 *
 * Both sides run in this one process, on loopback, interleaved turn by turn so
 * machine noise hits them alike; the output prints both and the difference.
 * Nothing here asserts on timings.
 *
 *   npm run bench                                  # every bench file (bench/run.ts)
 *   BENCH_ITERATIONS=20 node bench/gateway-overhead.ts
 *
 * Environment (all optional): BENCH_ITERATIONS (50), BENCH_WARMUP (5),
 * BENCH_CONCURRENCY (10), BENCH_ROUNDS (5), BENCH_TURN_TIMEOUT_MS (30000),
 * BENCH_MAX_SECONDS (600: past it, the phases stop early and say so).
 */
import { performance } from "node:perf_hooks";
import OpenAI from "openai";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import type { FakeConversation, FakeCursorClient, RunResult, TimelineEntry } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import type { MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import {
  comparisonTable,
  formatMs,
  formatRatio,
  machineContext,
  memorySnapshot,
  memoryTable,
  renderTable,
  summarize,
  type MemorySnapshot,
} from "./support/report.ts";
import { intSetting } from "./support/env-settings.ts";

const FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const PROMPT = "What's the weather in San Francisco right now?";

interface Settings {
  readonly iterations: number;
  readonly warmup: number;
  readonly concurrency: number;
  readonly rounds: number;
  readonly turnTimeoutMs: number;
  readonly maxSeconds: number;
}

function readSettings(env: NodeJS.ProcessEnv): Settings {
  return {
    iterations: intSetting(env, "BENCH_ITERATIONS", 50, 1, 10_000),
    warmup: intSetting(env, "BENCH_WARMUP", 5, 0, 1_000),
    concurrency: intSetting(env, "BENCH_CONCURRENCY", 10, 1, 200),
    rounds: intSetting(env, "BENCH_ROUNDS", 5, 0, 1_000),
    turnTimeoutMs: intSetting(env, "BENCH_TURN_TIMEOUT_MS", 30_000, 1_000, 600_000),
    maxSeconds: intSetting(env, "BENCH_MAX_SECONDS", 600, 10, 86_400),
  };
}

/** One measured turn, milliseconds from its start. */
interface TurnSample {
  /** The mock LLM has the request (upstream reached). */
  readonly upstreamMs: number;
  /** First non-empty text: a content delta (baseline) or a text_delta frame (gateway). */
  readonly firstTextMs: number;
  /** Last byte: the SDK stream is done (baseline) or the EndStream envelope arrived (gateway). */
  readonly endMs: number;
}

class TurnFailure extends Error {
  override readonly name = "TurnFailure";
}

/** Settles with `work`, or calls `onTimeout` and rejects after `ms`. */
async function bounded<T>(work: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new TurnFailure(`${what} did not finish within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** When the mock LLM received the request that `enqueue` will answer (performance clock). */
function upstreamArrival(llm: MockLlm): Promise<number> {
  return llm.enqueue({ kind: "fixture", file: FIXTURE }).request.then(() => performance.now());
}

class Bench {
  private readonly gw: GatewayHarness;
  private readonly settings: Settings;
  private readonly expectedText: string;
  private readonly openai: OpenAI;
  private readonly client: FakeCursorClient;

  constructor(gw: GatewayHarness, settings: Settings, expectedText: string) {
    this.gw = gw;
    this.settings = settings;
    this.expectedText = expectedText;
    this.openai = new OpenAI({ apiKey: "mock-llm-key-not-a-secret", baseURL: gw.llm.baseUrl("openai-chat"), maxRetries: 0, timeout: settings.turnTimeoutMs });
    this.client = gw.client();
  }

  conversation(): FakeConversation {
    return this.client.conversation();
  }

  async baselineTurn(): Promise<TurnSample> {
    const arrived = upstreamArrival(this.gw.llm);
    const abort = new AbortController();
    const start = performance.now();
    const turn = async (): Promise<TurnSample> => {
      const stream = await this.openai.chat.completions.create(
        { model: "gpt-4o", messages: [{ role: "user", content: PROMPT }], stream: true, stream_options: { include_usage: true } },
        { signal: abort.signal },
      );
      let firstText: number | undefined;
      let text = "";
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta?.content;
        if (content !== undefined && content !== null && content !== "") {
          firstText ??= performance.now();
          text += content;
        }
      }
      const end = performance.now();
      if (text !== this.expectedText || firstText === undefined) throw new TurnFailure(`baseline stream text differs from the fixture (${text.length} chars)`);
      return { upstreamMs: (await arrived) - start, firstTextMs: firstText - start, endMs: end - start };
    };
    return bounded(turn(), this.settings.turnTimeoutMs, "baseline stream", () => abort.abort());
  }

  async gatewayTurn(chat: FakeConversation): Promise<TurnSample> {
    const arrived = upstreamArrival(this.gw.llm);
    const start = performance.now();
    const run = chat.send(PROMPT, { modelId: this.gw.modelId });
    const result = await bounded(run.finished, this.settings.turnTimeoutMs, `gateway turn ${run.requestId}`, () => run.disconnect());
    this.check(result);
    const firstText = result.timeline.find(isTextDelta);
    const end = result.timeline.find((e) => e.kind === "end");
    if (firstText === undefined || end === undefined) throw new TurnFailure(`gateway turn ${result.requestId}: no text or no EndStream: ${result.describe()}`);
    return { upstreamMs: (await arrived) - start, firstTextMs: firstText.at - start, endMs: end.at - start };
  }

  private check(result: RunResult): void {
    const problems: string[] = [];
    if (result.end.kind !== "ok") problems.push(`ended ${JSON.stringify(result.end)}`);
    if (result.violations.length > 0) problems.push(`violations: ${result.violations.join("; ")}`);
    if (result.text !== this.expectedText) problems.push(`text differs from the fixture (${result.text.length} chars)`);
    if (problems.length > 0) throw new TurnFailure(`gateway turn ${result.requestId}: ${problems.join(", ")}; frames: ${result.describe()}`);
  }
}

function isTextDelta(e: TimelineEntry): boolean {
  if (e.kind !== "frame" || e.message.message.case !== "interactionUpdate") return false;
  const update = e.message.message.value.message;
  return update.case === "textDelta" && update.value.text !== "";
}

interface Samples {
  baseline: TurnSample[];
  gateway: TurnSample[];
}

interface ConcurrencyResult {
  turns: number;
  wallMs: number;
  endMs: number[];
}

interface Deadline {
  passed(): boolean;
}

/** Sequential turns, baseline and gateway interleaved (each on a fresh conversation). */
async function sequential(bench: Bench, count: number, deadline: Deadline): Promise<Samples> {
  const samples: Samples = { baseline: [], gateway: [] };
  for (let i = 0; i < count && !deadline.passed(); i++) {
    samples.baseline.push(await bench.baselineTurn());
    samples.gateway.push(await bench.gatewayTurn(bench.conversation()));
  }
  return samples;
}

/** `rounds` batches of `concurrency` turns at once per side; gateway conversations continue across rounds. */
async function concurrent(bench: Bench, settings: Settings, deadline: Deadline): Promise<{ baseline: ConcurrencyResult; gateway: ConcurrencyResult }> {
  const chats = Array.from({ length: settings.concurrency }, () => bench.conversation());
  const baseline: ConcurrencyResult = { turns: 0, wallMs: 0, endMs: [] };
  const gateway: ConcurrencyResult = { turns: 0, wallMs: 0, endMs: [] };
  const batch = async (into: ConcurrencyResult, turns: Array<() => Promise<TurnSample>>): Promise<void> => {
    const start = performance.now();
    const samples = await Promise.all(turns.map((t) => t()));
    into.wallMs += performance.now() - start;
    into.turns += samples.length;
    into.endMs.push(...samples.map((s) => s.endMs));
  };
  for (let round = 0; round < settings.rounds && !deadline.passed(); round++) {
    await batch(baseline, chats.map(() => () => bench.baselineTurn()));
    await batch(gateway, chats.map((chat) => () => bench.gatewayTurn(chat)));
  }
  return { baseline, gateway };
}

function throughputTable(results: { baseline: ConcurrencyResult; gateway: ConcurrencyResult }): string {
  const perSecond = (r: ConcurrencyResult): number => (r.wallMs > 0 ? (r.turns * 1000) / r.wallMs : Number.NaN);
  const b = summarize(results.baseline.endMs);
  const g = summarize(results.gateway.endMs);
  return renderTable(
    ["", "baseline (SDK direct)", "gateway (fake Cursor)", "gateway/baseline"],
    [
      ["turns", String(results.baseline.turns), String(results.gateway.turns), "-"],
      ["turns/s", perSecond(results.baseline).toFixed(1), perSecond(results.gateway).toFixed(1), formatRatio(perSecond(results.gateway), perSecond(results.baseline))],
      ["end ms p50", formatMs(b.p50), formatMs(g.p50), formatRatio(g.p50, b.p50)],
      ["end ms p95", formatMs(b.p95), formatMs(g.p95), formatRatio(g.p95, b.p95)],
      ["end ms max", formatMs(b.max), formatMs(g.max), formatRatio(g.max, b.max)],
    ],
  );
}

async function main(): Promise<void> {
  const settings = readSettings(process.env);
  const expected = readChatFixture(FIXTURE);
  const startedAt = performance.now();
  let interrupted = false;
  process.once("SIGINT", () => {
    interrupted = true;
    console.log("\ninterrupted: finishing the current turn, then cleaning up (Ctrl-C again to quit at once)");
  });
  const deadline: Deadline = { passed: () => interrupted || performance.now() - startedAt > settings.maxSeconds * 1000 };

  const machine = machineContext();
  console.log("gateway overhead: one Cursor text turn through the gateway vs the openai SDK straight to the same mock LLM");
  console.log(
    `machine: ${machine.cores} cores (${machine.cpuModel}), ${machine.totalMemory} RAM, load avg ${machine.loadAverage}; node ${machine.node} ${machine.platform}`,
  );
  console.log(
    `settings: ${settings.iterations} iterations after ${settings.warmup} warm-ups; ${settings.concurrency} concurrent x ${settings.rounds} rounds; turn timeout ${settings.turnTimeoutMs} ms; budget ${settings.maxSeconds} s`,
  );
  console.log("all services, the mock LLM and both clients share this process and its event loop (loopback only)\n");

  const memory: MemorySnapshot[] = [memorySnapshot("before gateway start")];
  const gw = await startGateway();
  let failed = false;
  try {
    const bench = new Bench(gw, settings, expected.text);
    await sequential(bench, settings.warmup, deadline);
    memory.push(memorySnapshot("after warm-up"));

    const seq = await sequential(bench, settings.iterations, deadline);
    memory.push(memorySnapshot("after sequential"));
    if (seq.gateway.length < settings.iterations) console.log(`note: sequential phase stopped early after ${seq.gateway.length} iterations`);
    console.log(`sequential: ${seq.gateway.length} turns per side (time from turn start)`);
    console.log(
      comparisonTable(
        [
          { name: "request reaches LLM", baseline: seq.baseline.map((s) => s.upstreamMs), candidate: seq.gateway.map((s) => s.upstreamMs) },
          { name: "first text", baseline: seq.baseline.map((s) => s.firstTextMs), candidate: seq.gateway.map((s) => s.firstTextMs) },
          { name: "end of stream", baseline: seq.baseline.map((s) => s.endMs), candidate: seq.gateway.map((s) => s.endMs) },
        ],
        { baseline: "baseline", candidate: "gateway" },
      ),
    );

    if (settings.rounds > 0) {
      const conc = await concurrent(bench, settings, deadline);
      memory.push(memorySnapshot("after concurrency"));
      const rounds = conc.gateway.turns / settings.concurrency;
      if (rounds < settings.rounds) console.log(`\nnote: concurrency phase stopped early after ${rounds} rounds`);
      console.log(`\nconcurrency: ${settings.concurrency} conversations at once, ${rounds} rounds (throughput = turns / summed batch wall time)`);
      console.log(throughputTable(conc));
    }
    console.log(`\nprocess memory`);
    console.log(memoryTable(memory));
  } catch (err) {
    failed = true;
    console.error(`\nbench failed: ${(err as Error).stack ?? String(err)}`);
  } finally {
    await gw.stop();
    console.log(`\ncleaned up: database ${gw.db.name} dropped, streams of bus prefix ${gw.bus.prefix} deleted`);
  }
  if (failed) process.exitCode = 1;
}

await main();
