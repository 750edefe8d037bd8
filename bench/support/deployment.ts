/**
 * The real multi-process gateway for a benchmark: `node scripts/start.ts` (what
 * `npm start` runs) as a child process, so every service is its own OS process
 * on the machine's Postgres and NATS (DATABASE_URL / NATS_URL set: nothing
 * embedded), with a fresh database, a private bus prefix, a temporary data
 * directory and a gateway config whose BYOK model is served by the mock LLM in
 * the bench process (plus what `configure` adds, e.g. the paced upstream's
 * models). The service pids and addresses come from the
 * supervisor's addresses file (DATA_DIR/local-gateway.json); the ops listeners
 * (/metrics) sit on METRICS_PORT_BASE + the service's index.
 *
 * stop(): SIGINT to the supervisor (services stop in order), then the
 * database and the bus prefix's streams are removed.
 *
 * BENCH_PROF_DIR=<dir>: every service (and the supervisor) runs with
 * --cpu-prof into that directory (NODE_OPTIONS), and services.json there maps
 * service names to pids (the profiles are named by pid); summarise them with
 * `node bench/cpu-profile-summary.ts <dir>`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { busNames, STORE_OPERATIONS } from "@byok/contracts";
import { busRequest, connectNats, silentLogger, type NatsConnection } from "@byok/platform";
import { writeHarnessGatewayConfig, type HarnessGatewayConfigOptions } from "@byok/test-support/gateway-harness";
import { npmStartEnv } from "@byok/test-support/start-env";
import { createTestBus, createTestDatabase, waitFor, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import type { MockLlm } from "@byok/test-support/mock-llm";

const ROOT = resolve(import.meta.dirname, "..", "..");
/** The order scripts/start.ts gives the ops listeners (METRICS_PORT_BASE + index). */
const METRICS_SERVICES = ["edge-proxy", "cursor-adapter", "run-worker", "provider-gateway", "store", "acp-adapter", "admin"] as const;
const READY_LINE = "Ctrl-C stops the gateway";
const KEPT_LINES = 60;

export interface Deployment {
  readonly adapterUrl: string;
  readonly proxyUrl: string;
  readonly caPem: string;
  readonly natsUrl: string;
  readonly db: TestDatabase;
  readonly bus: TestBus;
  /** The bench's own NATS connection (store requests, consumer counts). */
  readonly nc: NatsConnection;
  /** Service name -> pid (the seven services of npm start). */
  readonly services: Readonly<Record<string, number>>;
  /** Service name -> its ops listener (http://127.0.0.1:<port>). */
  readonly opsUrls: Readonly<Record<string, string>>;
  createMember(name: string): Promise<{ name: string; key: string }>;
  /** The supervisor's last output lines (for failure messages). */
  recentOutput(): string;
  /** Where every line of the services' output goes (BENCH_OUTPUT_FILE, else a file in the temp folder that outlives the run). */
  readonly outputFile: string;
  stop(): Promise<void>;
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once("error", () => done(false));
    server.listen(port, "127.0.0.1", () => server.close(() => done(true)));
  });
}

/** A base port with METRICS_SERVICES.length free ports after it. */
async function freeMetricsBase(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    let free = true;
    for (let i = 0; i < METRICS_SERVICES.length && free; i++) free = await portFree(base + i);
    if (free) return base;
  }
  throw new Error("no free range of ports for the ops listeners");
}

interface AddressesFile {
  proxyUrl: string;
  adapterUrl: string;
  caFile: string;
  services: Record<string, number>;
}

export interface DeploymentOptions {
  /** LOG_LEVEL of the services (default warn: logging is not what is measured). */
  logLevel?: string;
  /** Extra environment for every service (e.g. MAX_CONCURRENT_RUNS). */
  env?: Readonly<Record<string, string>>;
  /** Changes to the gateway config (more providers and models, e.g. the paced upstream's). */
  configure?: HarnessGatewayConfigOptions["configure"];
}

export async function startDeployment(llm: MockLlm, options: DeploymentOptions = {}): Promise<Deployment> {
  const db = await createTestDatabase();
  const bus = createTestBus();
  const dir = await mkdtemp(join(tmpdir(), "byok-bench-"));
  const dataDir = join(dir, "data");
  const configPath = await writeHarnessGatewayConfig(dir, llm, options.configure === undefined ? {} : { configure: options.configure });
  const metricsBase = await freeMetricsBase();
  const profDir = process.env["BENCH_PROF_DIR"];
  const profEnv: Record<string, string> = profDir ? { NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --cpu-prof --cpu-prof-dir=${resolve(profDir)}`.trim() } : {};
  const env = npmStartEnv(
    { databaseUrl: db.url, natsUrl: bus.natsUrl, busPrefix: bus.prefix, configPath, dataDir },
    { LOG_LEVEL: options.logLevel ?? "warn", METRICS_PORT_BASE: String(metricsBase), ...profEnv, ...options.env },
  );
  const lines: string[] = [];
  // Every line is kept in a file, so that an anomaly seen in the numbers (a stall, a retry) can be
  // looked up afterwards in the services' own warnings.
  const tee = process.env["BENCH_OUTPUT_FILE"] ?? join(tmpdir(), `byok-bench-${bus.prefix}.services.log`);
  const output = createWriteStream(tee, { flags: "a" });
  const keep = (line: string): void => {
    if (!output.writableEnded) output.write(line + "\n");
    lines.push(line);
    if (lines.length > KEPT_LINES) lines.shift();
  };
  let ready = false;
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, "scripts/start.ts")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  createInterface({ input: child.stdout! }).on("line", keep);
  createInterface({ input: child.stderr! }).on("line", (line) => {
    keep(line);
    if (line.includes(READY_LINE)) ready = true;
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  let gone = false;
  void exited.then(() => (gone = true));

  const cleanupInfra = async (): Promise<void> => {
    await new Promise<void>((resolve) => output.end(resolve));
    await bus.cleanup().catch(() => undefined);
    await db.drop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  const stopChild = async (): Promise<void> => {
    if (gone) return;
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  };

  let nc: NatsConnection | undefined;
  try {
    await waitFor(() => ready || gone, "the gateway (npm start) to be ready", 90_000);
    if (gone) throw new Error(`npm start exited before it was ready:\n${lines.join("\n")}`);
    const addresses = JSON.parse(readFileSync(join(dataDir, "local-gateway.json"), "utf8")) as AddressesFile;
    const caPem = await readFile(addresses.caFile, "utf8");
    if (profDir) {
      await mkdir(profDir, { recursive: true });
      await writeFile(join(profDir, "services.json"), JSON.stringify(addresses.services));
    }
    nc = await connectNats(bus.natsUrl, "bench", silentLogger());
    const names = busNames(bus.prefix);
    const conn = nc;
    const opsUrls = Object.fromEntries(METRICS_SERVICES.map((s, i) => [s, `http://127.0.0.1:${metricsBase + i}`]));
    return {
      adapterUrl: addresses.adapterUrl,
      proxyUrl: addresses.proxyUrl,
      caPem,
      natsUrl: bus.natsUrl,
      db,
      bus,
      nc: conn,
      services: addresses.services,
      opsUrls,
      async createMember(name) {
        const op = STORE_OPERATIONS.createMember;
        const res = await busRequest(conn, names.store(op.name), op.request, { name }, op.response, { timeoutMs: 10_000 });
        if (res.error !== undefined || res.member === undefined) throw new Error(`member.create failed: ${res.error?.message ?? "no member"}`);
        return { name, key: res.key };
      },
      recentOutput: () => lines.join("\n"),
      outputFile: tee,
      async stop() {
        await conn.close().catch(() => undefined);
        await stopChild();
        await cleanupInfra();
      },
    };
  } catch (err) {
    await nc?.close().catch(() => undefined);
    await stopChild();
    await cleanupInfra();
    throw err;
  }
}
