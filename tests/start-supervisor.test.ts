/**
 * `npm start` (scripts/start.ts) as an operator uses it: six services as
 * child processes behind one prefixed log stream, a working gateway, readiness
 * at any log level, the addresses file, "already running", a one-line error
 * for a port in use, and a clean stop when the npm process or the supervisor
 * gets SIGINT or SIGTERM. Uses the test Postgres/NATS (DATABASE_URL / NATS_URL
 * set, so nothing embedded is started) with a private database and bus prefix.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { busNames, STORE_OPERATIONS } from "@byok/contracts";
import { BusError, busRequest, connectNats, silentLogger } from "@byok/platform";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { FakeCursorClient } from "@byok/test-support/fake-cursor";
import { HARNESS_MODEL_ID, writeHarnessGatewayConfig } from "@byok/test-support/gateway-harness";
import { npmStartEnv } from "@byok/test-support/start-env";
import { createTestBus, createTestDatabase, waitFor, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import {
  exitWithin,
  hasExited,
  logsOf,
  occupyPort,
  portAccepts,
  processAlive,
  readAddresses,
  startSupervisor,
  waitUntilReady,
  type Supervisor,
} from "./start-support.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const SERVICES = ["store", "provider-gateway", "run-worker", "cursor-adapter", "acp-adapter", "admin", "edge-proxy"];

describe("npm start", () => {
  let db: TestDatabase;
  let bus: TestBus;
  let llm: MockLlm;
  let dir: string;
  let configPath: string;
  const supervisors: Supervisor[] = [];

  /** The environment of a gateway on the test's database, bus prefix and data directory. */
  const gatewayEnv = (overrides: Record<string, string> = {}): NodeJS.ProcessEnv =>
    npmStartEnv({ databaseUrl: db.url, natsUrl: bus.natsUrl, busPrefix: bus.prefix, configPath, dataDir: join(dir, "data") }, overrides);
  const start = (...args: Parameters<typeof startSupervisor>): Supervisor => {
    const s = startSupervisor(...args);
    supervisors.push(s);
    return s;
  };

  beforeEach(async () => {
    db = await createTestDatabase();
    bus = createTestBus();
    llm = await startMockLlm();
    dir = await mkdtemp(join(tmpdir(), "byok-start-"));
    configPath = await writeHarnessGatewayConfig(dir, llm);
  });
  afterEach(async () => {
    for (const s of supervisors.splice(0)) {
      if (!hasExited(s)) {
        s.child.kill("SIGKILL");
        await s.exit;
      }
    }
    await llm.stop();
    await bus.cleanup();
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function storeAnswers(): Promise<"answered" | string> {
    const nc = await connectNats(bus.natsUrl, "start-test", silentLogger());
    try {
      const op = STORE_OPERATIONS.getRun;
      return await busRequest(nc, busNames(bus.prefix).store(op.name), op.request, { runId: "x" }, op.response, { timeoutMs: 2_000 }).then(
        () => "answered",
        (err: unknown) => (err instanceof BusError ? err.kind : String(err)),
      );
    } finally {
      await nc.close();
    }
  }

  it("runs the six services as children with one prefixed log stream, serves a turn, and stops cleanly on Ctrl-C", async () => {
    const s = start(gatewayEnv());
    await waitUntilReady(s);
    // Each service's own "started" line reaches the shared stream (output may trail the readiness message).
    await waitFor(() => SERVICES.every((service) => logsOf(s, service).some((e) => e["msg"] === `${service} started`)), "every service's started line", 10_000);
    // npm start turns every service's ops listener on; /metrics answers.
    for (const service of SERVICES) {
      const ops = logsOf(s, service).find((e) => e["msg"] === "ops listener (metrics, health) listening");
      expect(ops, `${service} ops listener\n${s.context()}`).toBeDefined();
      const metrics = await fetch(`http://127.0.0.1:${Number(ops?.["port"])}/metrics`);
      expect(await metrics.text(), service).toContain(`service="${service}"`);
    }

    // The adapter listens on a random port (PORT=0); the edge proxy was pointed at it.
    const addresses = readAddresses(join(dir, "data"));
    const adapterPort = Number(new URL(addresses.adapterUrl).port);
    expect(adapterPort, s.context()).toBeGreaterThan(0);
    const proxyListening = logsOf(s, "edge-proxy").find((e) => e["msg"] === "edge proxy listening");
    expect(proxyListening?.["adapter"], s.context()).toBe(addresses.adapterUrl);
    const proxyPort = Number(new URL(addresses.proxyUrl).port);

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
        proxy: { url: addresses.proxyUrl, authorization: `Basic ${Buffer.from(`alice:${key}`).toString("base64")}` },
        ca: await readFile(addresses.caFile, "utf8"),
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
    expect(await exitWithin(s, 30_000), s.context()).toEqual({ code: 0, signal: null });
    for (const service of SERVICES) expect(logsOf(s, service).some((e) => e["msg"] === `${service} stopping`), `${service} stopping\n${s.context()}`).toBe(true);
    expect(await portAccepts(adapterPort)).toBe(false);
    expect(await portAccepts(proxyPort)).toBe(false);
    expect(await storeAnswers()).toBe("no_responders");
  }, 120_000);

  it.each(["SIGTERM", "SIGINT"] as const)(
    "through npm at LOG_LEVEL=warn: ready, addresses recorded, a second start refused, and %s to the npm process stops everything",
    async (signal) => {
      const s = start(gatewayEnv({ LOG_LEVEL: "warn" }), "npm");
      await waitUntilReady(s);
      // The ready line says where Cursor points, where the CA is and what to run next.
      const addresses = readAddresses(join(dir, "data"));
      const ready = s.stderr.join("\n");
      expect(ready).toContain(`Cursor proxy: ${addresses.proxyUrl}`);
      expect(ready).toContain(`team CA: ${addresses.caFile}`);
      const last = s.stderr.find((l) => l.includes("next:")) ?? "";
      expect(last).toMatch(/next: npm run admin -- create <name> \(or the admin page .*\), then .*npm run setup -- --gateway /);
      expect(last).toContain(addresses.proxyUrl);
      expect(last).toContain(addresses.caFile);
      // ... and where the admin page is, with the token npm start made for it (never the token itself).
      const tokenFile = join(dir, "data", "admin-token");
      expect(last).toContain(`admin page ${addresses.adminUrl}, token in ${tokenFile}`);
      expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
      const token = readFileSync(tokenFile, "utf8").trim();
      expect(last).not.toContain(token);
      const login = await fetch(`${addresses.adminUrl}/login`, { method: "POST", body: new URLSearchParams({ token }), redirect: "manual" });
      expect(login.headers.get("location")).toBe("/");
      expect(login.headers.get("set-cookie")).toMatch(/^byok_admin_session=/);
      expect(addresses).toMatchObject({ state: "running", natsUrl: bus.natsUrl, busPrefix: bus.prefix, caFile: join(dir, "data", "edge-proxy", "ca", "ca.crt") });
      expect(Object.keys(addresses.services).sort()).toEqual([...SERVICES].sort());

      // The proxy answers plain HTTP on its port: health and the team CA.
      expect((await fetch(`${addresses.proxyUrl}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${addresses.proxyUrl}/ca.crt`)).text()).toBe(await readFile(addresses.caFile, "utf8"));

      // A second start on the same data directory says who runs it, and starts nothing.
      const second = start(gatewayEnv({ LOG_LEVEL: "warn" }));
      expect(await exitWithin(second, 30_000)).toEqual({ code: 1, signal: null });
      expect(second.stderr.join("\n")).toMatch(new RegExp(`already running .*pid ${addresses.pid}`));
      expect(readAddresses(join(dir, "data")).pid).toBe(addresses.pid);

      s.child.kill(signal);
      expect(await exitWithin(s, 30_000), s.context()).not.toBe("timeout");
      await waitFor(() => ![addresses.pid, ...Object.values(addresses.services)].some(processAlive), "the supervisor and every service to exit", 20_000);
      expect(existsSync(join(dir, "data", "local-gateway.json"))).toBe(false);
      expect(await portAccepts(Number(new URL(addresses.proxyUrl).port))).toBe(false);
      expect(await storeAnswers()).toBe("no_responders");
    },
    120_000,
  );

  it("takes its services with it when the supervisor itself is killed (kill -9)", async () => {
    const s = start(gatewayEnv({ LOG_LEVEL: "warn" }));
    await waitUntilReady(s);
    const addresses = readAddresses(join(dir, "data"));
    s.child.kill("SIGKILL");
    await s.exit;
    await waitFor(() => !Object.values(addresses.services).some(processAlive), "every service to notice its supervisor is gone and exit", 20_000);
    expect(await storeAnswers()).toBe("no_responders");
  }, 90_000);

  it("names PROXY_PORT in one line when the proxy port is taken, and leaves nothing running", async () => {
    const taken = await occupyPort();
    try {
      const s = start(gatewayEnv({ PROXY_PORT: String(taken.port) }));
      expect(await exitWithin(s, 60_000), s.context()).toEqual({ code: 1, signal: null });
      const last = s.stderr.at(-1) ?? "";
      expect(last, s.context()).toMatch(new RegExp(`port ${taken.port} \\(the edge proxy\\) on 127\\.0\\.0\\.1 is already in use: set PROXY_PORT to a free port`));
      expect(existsSync(join(dir, "data", "local-gateway.json"))).toBe(false);
      expect(await storeAnswers()).toBe("no_responders");
    } finally {
      await taken.close();
    }
  }, 90_000);

  it("names EMBEDDED_NATS_PORT before starting anything when the embedded NATS port is taken", async () => {
    const taken = await occupyPort();
    try {
      const env = gatewayEnv({ EMBEDDED_NATS_PORT: String(taken.port) });
      delete env["NATS_URL"];
      const s = start(env);
      expect(await exitWithin(s, 30_000), s.context()).toEqual({ code: 1, signal: null });
      expect(s.stderr.at(-1), s.context()).toMatch(new RegExp(`port ${taken.port} \\(embedded NATS\\) .* set EMBEDDED_NATS_PORT to a free port, or NATS_URL`));
      expect(s.lines, "nothing was started").toEqual([]);
    } finally {
      await taken.close();
    }
  });

  it("explains a missing gateway configuration and points at the example", async () => {
    const s = start({ ...process.env, GATEWAY_CONFIG: join(dir, "missing.json"), DATABASE_URL: db.url, NATS_URL: bus.natsUrl, DATA_DIR: join(dir, "data") });
    const exit = await s.exit;
    expect(exit.code).toBe(1);
    expect(s.stderr.join("\n")).toMatch(/config\/gateway\.example\.json/);
    expect(existsSync(join(dir, "data", "local-gateway.json"))).toBe(false);
  });
});
