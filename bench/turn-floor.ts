/**
 * The floor of a Cursor text turn on this machine: what the transport work a
 * turn cannot avoid costs, with none of the services' own logic, to set
 * beside what bench/cursor-path.ts measures for the whole deployment.
 *
 * A text turn through the gateway needs at least (counts from
 * bench/cursor-path.ts and docs/performance.md; each can be overridden):
 * - 8 unary HTTP requests answered by the adapter (Cursor's BidiAppends: the
 *   run request and seven KV answers) and 1 streamed answer (the RunSSE) of a
 *   few writes (BENCH_FLOOR_HTTP_UNARY, BENCH_FLOOR_STREAM_WRITES);
 * - the bus messages the services publish, each delivered to one subscriber
 *   (BENCH_FLOOR_BUS_MESSAGES, 21 as counted from the services' /metrics;
 *   counted here as core NATS messages, though a few are JetStream
 *   publishes, which cost more);
 * - the store's Postgres transactions (BENCH_FLOOR_TRANSACTIONS, 4: run.begin,
 *   run.append, run.finish and the ledger's), here each of five statements in
 *   two round trips through the store's own pipelined pool;
 * - one streamed upstream request read by the provider gateway (a recorded
 *   34-event chat stream).
 *
 * Each primitive runs in processes of its own (bench/support/floor-peer.ts),
 * one operation after another as in a sequential turn, on the transports the
 * services use; its CPU is read from /proc for every process involved but
 * the fake client's and the mock upstream's (which the direct arm has too):
 * the HTTP server, both bus peers and nats-server, the Postgres peer and its
 * backend, the upstream reader. The arms alternate in rounds.
 *
 * Printed (never asserted): CPU µs and latency per operation, the CPU per
 * turn those counts add up to, and the added time to first text of the
 * waits on a turn's critical path (one HTTP request in, the durable run
 * publish and run.begin as bus round trips, run.begin's transaction, the
 * model call and two event hops as one-way messages).
 *
 *   npm run bench -- turn-floor
 *
 * Needs NATS and Postgres (NATS_URL, DATABASE_URL). Environment:
 * BENCH_FLOOR_OPERATIONS (2000 per round), BENCH_ROUNDS (3), the counts above.
 */
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import { ADMIN_DATABASE_URL, createTestBus, createTestDatabase } from "@byok/test-support/infra";
import { providerFixture } from "@byok/test-support/fixtures";
import { startHelper, type HelperProcess } from "./support/helper-process.ts";
import { formatMachineSpeed, measureMachineSpeed } from "./support/machine-speed.ts";
import { runInFlight } from "./support/in-flight.ts";
import { cpuBetween, cpuSum, postgresBackends, ProcessSampler, trackedNatsServer, type Tracked } from "./support/proc-stats.ts";
import { machineContext, percentile, renderTable } from "./support/report.ts";
import { intSetting, listSetting } from "./support/settings.ts";

const OPERATIONS = intSetting("BENCH_FLOOR_OPERATIONS", 2000, { min: 100 });
const ROUNDS = intSetting("BENCH_ROUNDS", 3, { min: 1 });
const LEVELS = listSetting("BENCH_FLOOR_CONCURRENCY", [1, 16], { min: 1, max: 256 });
const HTTP_UNARY = intSetting("BENCH_FLOOR_HTTP_UNARY", 8, { min: 0 });
const STREAM_WRITES = intSetting("BENCH_FLOOR_STREAM_WRITES", 5, { min: 1 });
const BUS_MESSAGES = intSetting("BENCH_FLOOR_BUS_MESSAGES", 21, { min: 0 });
const BUS_BYTES = intSetting("BENCH_FLOOR_BUS_BYTES", 600, { min: 1 });
const TRANSACTIONS = intSetting("BENCH_FLOOR_TRANSACTIONS", 4, { min: 0 });

/** One primitive: how to run N of it with C in flight, the processes whose CPU it costs, and how many operations one turn needs. */
interface Primitive {
  readonly name: string;
  /** Operations per turn (a bus round trip is two of the turn's messages). */
  readonly perTurn: number;
  /** Upstream streams take longer than the other operations: a quarter as many of them. */
  readonly share: number;
  readonly charged: readonly Tracked[];
  /** The client's or the mock upstream's side, which a turn also costs the machine: this process (the fake client) or other pids. */
  readonly clientSide: "this process" | readonly Tracked[] | "none";
  run(count: number, concurrency: number): Promise<number[]>;
}

interface Measured {
  readonly cpuUsPerOperation: number[];
  readonly clientCpuUsPerOperation: number[];
  readonly latencies: number[];
}

/** A level's floor: CPU per turn of the services' side and of the client's and mock's, and each primitive's latency p50. */
interface LevelFloor {
  readonly turnCpuMs: number;
  readonly clientCpuMs: number;
  readonly latencyP50: ReadonlyMap<Primitive, number>;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function post(port: number, path: string, body: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "POST", agent, headers: { "content-type": "application/proto" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${path}: HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString()}`))));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** N requests from this process, C at a time (this process plays Cursor: its CPU is the client's side). */
function driveHttp(port: number, path: string, count: number, concurrency: number): Promise<number[]> {
  const body = "x".repeat(300);
  return runInFlight(count, concurrency, async () => {
    const at = performance.now();
    await post(port, path, body);
    return performance.now() - at;
  });
}

/** N operations run by a peer process, C at a time; its answer carries each one's latency. */
async function drivePeer(peer: HelperProcess, count: number, concurrency: number): Promise<number[]> {
  const answer = await post(peer.port, `/run?n=${count}&c=${concurrency}`, "");
  return (JSON.parse(answer.toString()) as { latencies: number[] }).latencies;
}

const byPid = (name: string, pid: number): Tracked => ({ name, pids: async () => [pid] });

async function measure(primitive: Primitive, count: number, concurrency: number): Promise<{ cpuUs: number; clientCpuUs: number; latencies: number[] }> {
  const sampler = new ProcessSampler(primitive.charged);
  const clientSampler = new ProcessSampler(Array.isArray(primitive.clientSide) ? primitive.clientSide : []);
  const before = await sampler.sample();
  const clientBefore = await clientSampler.sample();
  const selfBefore = process.cpuUsage();
  const latencies = await primitive.run(count, concurrency);
  const self = process.cpuUsage(selfBefore);
  const cpuMs = cpuSum(cpuBetween(before, await sampler.sample()));
  const clientMs = primitive.clientSide === "this process" ? (self.user + self.system) / 1000 : cpuSum(cpuBetween(clientBefore, await clientSampler.sample()));
  return { cpuUs: (cpuMs * 1000) / count, clientCpuUs: (clientMs * 1000) / count, latencies };
}

const us = (v: number): string => v.toFixed(0);
const ms = (v: number): string => v.toFixed(2);

/** Every primitive at one concurrency, the primitives alternating round by round; prints the level's table. */
async function measureLevel(primitives: readonly Primitive[], concurrency: number): Promise<LevelFloor> {
  const results = new Map<Primitive, Measured>(primitives.map((p) => [p, { cpuUsPerOperation: [], clientCpuUsPerOperation: [], latencies: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const primitive of primitives) {
      const count = Math.ceil(OPERATIONS * primitive.share);
      const { cpuUs, clientCpuUs, latencies } = await measure(primitive, count, concurrency);
      const into = results.get(primitive)!;
      into.cpuUsPerOperation.push(cpuUs);
      into.clientCpuUsPerOperation.push(clientCpuUs);
      into.latencies.push(...latencies);
    }
  }
  const rows: string[][] = [];
  let turnCpuMs = 0;
  let clientCpuMs = 0;
  const latencyP50 = new Map<Primitive, number>();
  for (const primitive of primitives) {
    const measured = results.get(primitive)!;
    const cpuUs = percentile(measured.cpuUsPerOperation, 50);
    const clientCpuUs = percentile(measured.clientCpuUsPerOperation, 50);
    const perTurnMs = (cpuUs * primitive.perTurn) / 1000;
    turnCpuMs += perTurnMs;
    clientCpuMs += (clientCpuUs * primitive.perTurn) / 1000;
    latencyP50.set(primitive, percentile(measured.latencies, 50));
    rows.push([
      primitive.name,
      us(cpuUs),
      ms(percentile(measured.latencies, 50)),
      ms(percentile(measured.latencies, 99)),
      String(primitive.perTurn),
      ms(perTurnMs),
      primitive.clientSide === "none" ? "-" : us(clientCpuUs),
    ]);
  }
  rows.push(["total per text turn", "", "", "", "", ms(turnCpuMs), ms(clientCpuMs)]);
  console.log(`\n## ${concurrency} in flight: ${ROUNDS} rounds of ${OPERATIONS} operations each (upstream reads: a quarter of that); CPU is the median round's`);
  console.log(renderTable(["primitive", "CPU µs / op", "latency p50 ms", "latency p99 ms", "per turn", "CPU ms / turn", "client or mock CPU µs / op"], rows));
  return { turnCpuMs, clientCpuMs, latencyP50 };
}

async function main(): Promise<void> {
  const bus = createTestBus();
  const db = await createTestDatabase();
  const subject = `${bus.prefix}.floor.echo`;
  const peers: HelperProcess[] = [];
  const start = async (script: string, arg: string): Promise<HelperProcess> => {
    const peer = await startHelper(script, arg);
    peers.push(peer);
    return peer;
  };
  const startPeer = (role: object): Promise<HelperProcess> => start("bench/support/floor-peer.ts", JSON.stringify(role));
  try {
    const httpServer = await startPeer({ kind: "http-server" });
    const echo = await startPeer({ kind: "bus-echo", natsUrl: bus.natsUrl, subject });
    const caller = await startPeer({ kind: "bus-caller", natsUrl: bus.natsUrl, subject, bytes: BUS_BYTES });
    const postgresPeer = await startPeer({ kind: "postgres", databaseUrl: db.url });
    const upstream = await start("bench/support/sse-upstream.ts", providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"));
    const reader = await startPeer({ kind: "upstream-reader", upstreamUrl: `http://127.0.0.1:${upstream.port}` });

    const httpServerSide = [byPid("http server", httpServer.pid)];
    const unary: Primitive = { name: "HTTP request answered (BidiAppend)", perTurn: HTTP_UNARY, share: 1, charged: httpServerSide, clientSide: "this process", run: (n, c) => driveHttp(httpServer.port, "/unary", n, c) };
    const stream: Primitive = {
      name: `HTTP stream of ${STREAM_WRITES} writes (RunSSE)`,
      perTurn: 1,
      share: 1,
      charged: httpServerSide,
      clientSide: "this process",
      run: (n, c) => driveHttp(httpServer.port, `/stream?writes=${STREAM_WRITES}`, n, c),
    };
    const roundTrip: Primitive = {
      name: `bus round trip (${BUS_BYTES} B each way)`,
      perTurn: BUS_MESSAGES / 2,
      share: 1,
      charged: [byPid("caller", caller.pid), byPid("echo", echo.pid), ...trackedNatsServer(bus.natsUrl, "nats-server")],
      clientSide: "none",
      run: (n, c) => drivePeer(caller, n, c),
    };
    const transaction: Primitive = {
      name: "Postgres transaction (5 statements, 2 round trips)",
      perTurn: TRANSACTIONS,
      share: 1,
      charged: [byPid("postgres peer", postgresPeer.pid), { name: "postgres backend", pids: () => postgresBackends(ADMIN_DATABASE_URL, db.name) }],
      clientSide: "none",
      run: (n, c) => drivePeer(postgresPeer, n, c),
    };
    const upstreamRead: Primitive = {
      name: "upstream stream read (34 events)",
      perTurn: 1,
      share: 0.25,
      charged: [byPid("reader", reader.pid)],
      clientSide: [byPid("mock upstream", upstream.pid)],
      run: (n, c) => drivePeer(reader, n, c),
    };
    const primitives = [unary, stream, roundTrip, transaction, upstreamRead];

    for (const primitive of primitives) await primitive.run(300, 4); // warm-up
    const machine = machineContext();
    console.log(`\nturn-floor: the transport work of one Cursor text turn, ${machine.cores} cores (${machine.cpuModel}), Node ${machine.node}, load ${machine.loadAverage}`);
    console.log(`machine speed at the start: ${formatMachineSpeed(await measureMachineSpeed())}`);
    console.log(
      `per turn: ${HTTP_UNARY} BidiAppends and a RunSSE of ${STREAM_WRITES} writes answered, ${BUS_MESSAGES} bus messages, ${TRANSACTIONS} Postgres transactions, one upstream stream read; CPU of every process involved, the client's and the mock's side apart`,
    );

    for (const level of LEVELS) {
      const floor = await measureLevel(primitives, level);
      const cores = machine.cores;
      console.log(
        `at this floor ${cores} fully used cores carry at most ${((cores * 1000) / (floor.turnCpuMs + floor.clientCpuMs)).toFixed(0)} turns/s with the client's and the mock's floor (${ms(floor.clientCpuMs)} ms per turn) on the same cores, ${((cores * 1000) / floor.turnCpuMs).toFixed(0)} turns/s with them elsewhere`,
      );
      if (level !== 1) continue;
      const p50 = (primitive: Primitive): number => floor.latencyP50.get(primitive)!;
      const firstText = p50(unary) + 2 * p50(roundTrip) + p50(transaction) + 1.5 * p50(roundTrip);
      console.log(
        `added time to first text, the waits alone: one HTTP request in ${ms(p50(unary))} + the run's durable publish and run.begin as two bus round trips ${ms(2 * p50(roundTrip))} + run.begin's transaction ${ms(p50(transaction))} + the model call and two event hops as three one-way messages ${ms(1.5 * p50(roundTrip))} = ${ms(firstText)} ms (p50s)`,
      );
    }
    console.log(`\ncompare: bench/cursor-path.ts prints the whole deployment's CPU per turn (all processes), its turns/s and its added time to first text in the same units`);
    console.log(`machine speed at the end: ${formatMachineSpeed(await measureMachineSpeed())}`);
  } finally {
    for (const peer of peers.reverse()) await peer.stop();
    agent.destroy();
    await db.drop();
    await bus.cleanup();
  }
}

await main();
