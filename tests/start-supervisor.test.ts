/**
 * `npm start` (scripts/start.ts) as an operator uses it: five services as
 * child processes behind one prefixed log stream, a working gateway, and a
 * clean Ctrl-C. Uses the test Postgres/NATS (DATABASE_URL / NATS_URL set, so
 * nothing embedded is started) with a private database and bus prefix.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import { createInterface } from "node:readline";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { busNames, STORE_OPERATIONS } from "@byok/contracts";
import { BusError, busRequest, connectNats, silentLogger } from "@byok/platform";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { FakeCursorClient } from "@byok/test-support/fake-cursor";
import { HARNESS_MOCK_KEY_ENV, HARNESS_MODEL_ID, writeHarnessGatewayConfig } from "@byok/test-support/gateway-harness";
import { createTestBus, createTestDatabase, waitFor, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";

const ROOT = new URL("../", import.meta.url).pathname;
const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const SERVICES = ["store", "provider-gateway", "run-worker", "cursor-adapter", "edge-proxy"];

interface Supervisor {
  child: ChildProcess;
  /** stdout lines: "<service> | <log line>" */
  lines: string[];
  stderr: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startSupervisor(env: NodeJS.ProcessEnv): Supervisor {
  const child = spawn(process.execPath, [join(ROOT, "scripts/start.ts")], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (l) => lines.push(l));
  createInterface({ input: child.stderr! }).on("line", (l) => stderr.push(l));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, lines, stderr, exit };
}

/** The JSON log entries a service printed through the supervisor. */
function logsOf(s: Supervisor, service: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of s.lines) {
    const bar = line.indexOf(" | ");
    if (bar < 0 || line.slice(0, bar).trim() !== service) continue;
    try {
      out.push(JSON.parse(line.slice(bar + 3)) as Record<string, unknown>);
    } catch {
      // not a JSON log line
    }
  }
  return out;
}

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("npm start", () => {
  let db: TestDatabase;
  let bus: TestBus;
  let llm: MockLlm;
  let dir: string;
  let supervisor: Supervisor | undefined;

  beforeEach(async () => {
    db = await createTestDatabase();
    bus = createTestBus();
    llm = await startMockLlm();
    dir = await mkdtemp(join(tmpdir(), "byok-start-"));
  });
  afterEach(async () => {
    if (supervisor && supervisor.child.exitCode === null && supervisor.child.signalCode === null) {
      supervisor.child.kill("SIGKILL");
      await supervisor.exit;
    }
    await llm.stop();
    await bus.cleanup();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs the five services as children with one prefixed log stream, serves a turn, and stops cleanly on Ctrl-C", async () => {
    const configPath = await writeHarnessGatewayConfig(dir, llm);
    supervisor = startSupervisor({
      ...process.env,
      DATABASE_URL: db.url,
      NATS_URL: bus.natsUrl,
      BUS_PREFIX: bus.prefix,
      GATEWAY_CONFIG: configPath,
      [HARNESS_MOCK_KEY_ENV]: "mock-llm-key-not-a-secret",
      PORT: "0",
      PROXY_HOST: "127.0.0.1",
      PROXY_PORT: "0",
      INBOUND_PORT: "0",
      CA_DIR: join(dir, "ca"),
      UPSTREAM_ORIGIN: "http://127.0.0.1:9",
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      METRICS_PORT_BASE: "0",
    });
    const s = supervisor;
    const context = (): string => `stderr:\n${s.stderr.join("\n")}\nstdout (last 40):\n${s.lines.slice(-40).join("\n")}`;

    await waitFor(() => s.stderr.some((l) => l.includes("gateway running")) || s.child.exitCode !== null, "the gateway to start", 60_000);
    expect(s.child.exitCode, context()).toBeNull();
    for (const service of SERVICES) expect(logsOf(s, service).some((e) => e["msg"] === `${service} started`), `${service} started\n${context()}`).toBe(true);
    // npm start turns every service's ops listener on; /metrics answers.
    for (const service of SERVICES) {
      const ops = logsOf(s, service).find((e) => e["msg"] === "ops listener (metrics, health) listening");
      expect(ops, `${service} ops listener\n${context()}`).toBeDefined();
      const metrics = await fetch(`http://127.0.0.1:${Number(ops?.["port"])}/metrics`);
      expect(await metrics.text(), service).toContain(`service="${service}"`);
    }

    // The adapter listens on a random port (PORT=0); the edge proxy was pointed at it.
    const listening = logsOf(s, "cursor-adapter").find((e) => e["msg"] === "cursor adapter listening");
    const port = Number(listening?.["port"]);
    expect(port, context()).toBeGreaterThan(0);
    const proxyListening = logsOf(s, "edge-proxy").find((e) => e["msg"] === "edge proxy listening");
    expect(proxyListening?.["adapter"], context()).toBe(`http://127.0.0.1:${port}`);
    const proxyPort = Number(proxyListening?.["port"]);

    // The gateway works the way a member uses it: a turn through the edge proxy with a member key and the team CA.
    const nc = await connectNats(bus.natsUrl, "start-test", silentLogger());
    let key: string;
    try {
      const op = STORE_OPERATIONS.createMember;
      const created = await busRequest(nc, busNames(bus.prefix).store(op.name), op.request, { name: "alice" }, op.response, { timeoutMs: 5_000 });
      key = created.key;
    } finally {
      await nc.close();
    }
    llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const client = new FakeCursorClient({
      transport: {
        baseUrl: "https://api2.cursor.sh",
        proxy: { url: `http://127.0.0.1:${proxyPort}`, authorization: `Basic ${Buffer.from(`alice:${key}`).toString("base64")}` },
        ca: await readFile(join(dir, "ca", "ca.crt"), "utf8"),
      },
    });
    try {
      const result = await client.conversation().send("hello", { modelId: HARNESS_MODEL_ID }).finished;
      expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
      expect(result.text).toBe(readChatFixture(TEXT_FIXTURE).text);
    } finally {
      await client.close();
    }

    // Ctrl-C: every service stops, the supervisor exits 0, nothing keeps serving.
    s.child.kill("SIGINT");
    const exit = await Promise.race([s.exit, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 30_000))]);
    expect(exit, context()).toEqual({ code: 0, signal: null });
    for (const service of SERVICES) expect(logsOf(s, service).some((e) => e["msg"] === `${service} stopping`), `${service} stopping\n${context()}`).toBe(true);
    expect(await portAccepts(port)).toBe(false);
    expect(await portAccepts(proxyPort)).toBe(false);
    const after = await connectNats(bus.natsUrl, "start-test", silentLogger());
    try {
      const op = STORE_OPERATIONS.getRun;
      const noStore = await busRequest(after, busNames(bus.prefix).store(op.name), op.request, { runId: "x" }, op.response, { timeoutMs: 2_000 }).then(
        () => "answered",
        (err: unknown) => (err instanceof BusError ? err.kind : String(err)),
      );
      expect(noStore).toBe("no_responders");
    } finally {
      await after.close();
    }
  }, 120_000);

  it("explains a missing gateway configuration and points at the example", async () => {
    supervisor = startSupervisor({ ...process.env, GATEWAY_CONFIG: join(dir, "missing.json"), DATABASE_URL: db.url, NATS_URL: bus.natsUrl });
    const exit = await supervisor.exit;
    expect(exit.code).toBe(1);
    expect(supervisor.stderr.join("\n")).toMatch(/config\/gateway\.example\.json/);
  });
});
