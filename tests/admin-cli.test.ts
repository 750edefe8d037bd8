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
import { HARNESS_MODEL_ID, writeHarnessGatewayConfig } from "@byok/test-support/gateway-harness";
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { exitWithin, readAddresses, ROOT, startSupervisor, supervisorEnv, waitUntilReady, type Supervisor } from "./start-support.ts";

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
  gateway = startSupervisor(supervisorEnv({ db, bus, configPath, dir }, { LOG_LEVEL: "warn" }));
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

  it("does every admin action of the page as a command, with --json for scripts", async () => {
    const json = async (...args: string[]): Promise<Record<string, unknown>> => {
      const r = await admin([...args, "--json"]);
      expect(r.code, `${args.join(" ")}: ${r.err}`).toBe(0);
      return JSON.parse(r.out) as Record<string, unknown>;
    };
    const { team } = (await json("team", "create", "platform", "--models", `${HARNESS_MODEL_ID},other-model`, "--retention-days", "30")) as { team: { teamId: string; allowedModels: string[]; retentionDays: number } };
    expect(team).toMatchObject({ allowedModels: [HARNESS_MODEL_ID, "other-model"], retentionDays: 30 });
    expect(((await json("team", "update", team.teamId, "--retention-days", "keep")) as { team: { retentionDays: null } }).team.retentionDays).toBeNull();
    const { member } = (await json("member", "create", "bob", "--team", team.teamId)) as { member: { memberId: string; teamId: string } };
    expect(member.teamId).toBe(team.teamId);

    const { key } = (await json("key", "create", member.memberId, "--label", "laptop", "--expires", "2099-01-01")) as { key: { keyId: string; expiresAt: string } };
    expect(key.expiresAt).toMatch(/^2099-01-01T00:00:00/);
    const rotated = (await json("key", "rotate", key.keyId, "--grace-seconds", "60")) as { key: { keyId: string }; secret: string; previous: { keyId: string; active: boolean; replacedByKeyId: string } };
    expect(rotated.previous).toMatchObject({ keyId: key.keyId, active: true, replacedByKeyId: rotated.key.keyId });
    await json("key", "revoke", key.keyId);
    const keys = (await json("key", "list", member.memberId, "--all")) as { keys: Array<{ keyId: string; active: boolean }> };
    expect(keys.keys.find((k) => k.keyId === key.keyId)?.active).toBe(false);

    const { budget } = (await json("budget", "set", "--member", member.memberId, "--period", "daily", "--usd", "2.50")) as { budget: { budgetId: string; limitUsd: string; period: string } };
    expect(budget).toMatchObject({ period: "daily", limitUsd: "2.5" });
    expect(((await json("budget", "list", "--member", member.memberId)) as { budgets: unknown[] }).budgets).toHaveLength(1);
    expect((await json("limits", "set", member.memberId, "--rpm", "30", "--concurrent", "2")).limits).toEqual({ memberId: member.memberId, requestsPerMinute: 30, tokensPerMinute: null, concurrentRuns: 2 });
    expect((await json("limits", "get", member.memberId)).limits).toMatchObject({ requestsPerMinute: 30 });
    await json("budget", "delete", budget.budgetId);

    expect(await json("runs", "--running")).toEqual({ runs: [] });
    expect((await json("spend", "--group", "model", "--bucket", "hour")).points).toEqual([]);
    expect(await json("cache", "--member", member.memberId)).toEqual({ models: [], conversations: [] });
    expect((await json("retention", "run")).purge).toMatchObject({ conversations: 0 });
    const audit = (await json("audit", "--member", member.memberId)) as { entries: Array<{ action: string; actor: string }> };
    expect(audit.entries.map((e) => e.action).reverse()).toEqual([
      "member.created",
      "key.created",
      "key.created",
      "key.created",
      "key.rotated",
      "key.revoked",
      "budget.set",
      "limits.set",
      "budget.deleted",
    ]);
    expect(new Set(audit.entries.map((e) => e.actor))).toEqual(new Set(["admin"]));

    // Bad input is a usage error (exit 2) naming the command; text output reads as a table.
    const bad = await admin(["budget", "set", "--member", member.memberId, "--period", "yearly", "--usd", "1"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/budget set: period: .*\nusage: npm run admin -- budget set /);
    expect((await admin(["team", "list"])).out).toMatch(/^TEAM\s+NAME\s+MODELS\s+CONTENT\s+MEMBERS\n.*default \(default\)/);
    await json("member", "revoke", member.memberId);
  });

  it("says so when no gateway runs, instead of trying a default address", async () => {
    const none = await admin(["list"], { DATA_DIR: join(dir, "elsewhere") });
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/no running gateway found: .*elsewhere\/local-gateway\.json does not exist/);
    // The addresses file names the pid the admin CLI would have used.
    expect(readAddresses(join(dir, "data")).state).toBe("running");
  });
});
