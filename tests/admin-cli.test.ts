/**
 * `npm run admin` as an operator runs it next to `npm start`: it finds the
 * running gateway through the addresses file (no NATS_URL in its
 * environment), prints JSON with --json, and names the address it used in
 * --help and in every error.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HARNESS_MOCK_KEY_ENV, writeHarnessGatewayConfig } from "@byok/test-support/gateway-harness";
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { exitWithin, readAddresses, ROOT, startSupervisor, waitUntilReady, type Supervisor } from "./start-support.ts";

const run = promisify(execFile);

let db: TestDatabase;
let bus: TestBus;
let llm: MockLlm;
let dir: string;
let gateway: Supervisor;

/** The admin CLI with a clean environment: nothing tells it where the gateway is but DATA_DIR (and `extra`). */
async function admin(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"], HOME: process.env["HOME"], DATA_DIR: join(dir, "data"), ...extra };
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, "services/admin/src/cli/main.ts"), ...args], { env, timeout: 30_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, out: e.stdout ?? "", err: e.stderr ?? "" };
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  bus = createTestBus();
  llm = await startMockLlm();
  dir = await mkdtemp(join(tmpdir(), "byok-admin-"));
  const configPath = await writeHarnessGatewayConfig(dir, llm);
  gateway = startSupervisor({
    ...process.env,
    DATABASE_URL: db.url,
    NATS_URL: bus.natsUrl,
    BUS_PREFIX: bus.prefix,
    GATEWAY_CONFIG: configPath,
    DATA_DIR: join(dir, "data"),
    [HARNESS_MOCK_KEY_ENV]: "mock-llm-key-not-a-secret",
    PORT: "0",
    PROXY_PORT: "0",
    UPSTREAM_ORIGIN: "http://127.0.0.1:9",
    LOG_LEVEL: "warn",
    LOG_FORMAT: "json",
    METRICS_PORT_BASE: "0",
  });
  await waitUntilReady(gateway);
}, 120_000);

afterAll(async () => {
  if (gateway && gateway.child.exitCode === null) {
    gateway.child.kill("SIGTERM");
    if ((await exitWithin(gateway, 30_000)) === "timeout") gateway.child.kill("SIGKILL");
  }
  await llm?.stop();
  await bus?.cleanup();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("npm run admin next to npm start", () => {
  it("finds the running gateway by itself and manages members, in JSON with --json", async () => {
    const where = `${bus.natsUrl} (bus prefix ${bus.prefix}, from ${join(dir, "data", "local-gateway.json")})`;
    const help = await admin(["--help"]);
    expect(help.out).toContain(`gateway: ${where}`);

    const created = await admin(["create", "alice", "--json"]);
    expect(created.code, created.err).toBe(0);
    const { member, key } = JSON.parse(created.out) as { member: { memberId: string; name: string }; key: string };
    expect(member.name).toBe("alice");
    expect(key.length).toBeGreaterThan(20);
    expect(JSON.parse((await admin(["list", "--json"])).out)).toEqual({ members: [expect.objectContaining({ memberId: member.memberId, name: "alice" })] });
    expect((await admin(["revoke", member.memberId])).out).toMatch(/^revoked: /);

    // A wrong address is named in the error, whichever way it was given.
    const elsewhere = await admin(["list"], { NATS_URL: bus.natsUrl, BUS_PREFIX: "nobody_here" });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.err).toContain(`${bus.natsUrl} (bus prefix nobody_here, from NATS_URL)`);
    const unreachable = await admin(["list", "--nats-url", "nats://127.0.0.1:1"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.err).toContain("cannot connect to NATS at nats://127.0.0.1:1 (bus prefix byok, from --nats-url)");
  });

  it("says so when no gateway runs, instead of trying a default address", async () => {
    const none = await admin(["list"], { DATA_DIR: join(dir, "elsewhere") });
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/no running gateway found: .*elsewhere\/local-gateway\.json does not exist/);
    // The addresses file names the pid the admin CLI would have used.
    expect(readAddresses(join(dir, "data")).state).toBe("running");
  });
});
