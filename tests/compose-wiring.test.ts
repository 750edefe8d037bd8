/**
 * docker-compose.yml drives the gateway: every gateway service runs with its
 * command and exactly its compose environment (interpolated from
 * infra/compose.env.example as `.env`, keys from infra/keys.env.example as
 * `keys.env`, config/gateway.example.json as the mounted config) as a local
 * process, with service names mapped to loopback (tests/compose/local-compose.ts
 * says how), and a member's text turn goes through the published proxy port.
 * The test's Postgres and NATS stand in for the postgres and nats services.
 * A renamed variable, a wrong service name or port, a missing mount or key
 * file breaks this test the way it would break `docker compose up`.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { parseEnv, promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerfileEnv, loadComposeProject, serviceEnvironment, type ComposeProject } from "./compose/compose-file.ts";
import { planLocalCompose, startLocalCompose, type LocalCompose, type LocalComposePlan } from "./compose/local-compose.ts";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { FakeCursorClient } from "@byok/test-support/fake-cursor";
import { ADMIN_DATABASE_URL, createTestBus, createTestDatabase, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";

const ROOT = new URL("../", import.meta.url).pathname;
const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const run = promisify(execFile);

let db: TestDatabase;
let bus: TestBus;
let llm: MockLlm;
let dir: string;
let project: ComposeProject;
let plan: LocalComposePlan;
let gateway: LocalCompose | undefined;

function hostPort(url: string, fallbackPort: number): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || fallbackPort}`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  bus = createTestBus();
  llm = await startMockLlm();
  // A project directory as README.md tells a team to lay it out.
  dir = await mkdtemp(join(tmpdir(), "byok-compose-"));
  copyFileSync(join(ROOT, "infra/compose.env.example"), join(dir, ".env"));
  copyFileSync(join(ROOT, "infra/keys.env.example"), join(dir, "keys.env"));
  mkdirSync(join(dir, "config"));
  const example = JSON.parse(readFileSync(join(ROOT, "config/gateway.example.json"), "utf8")) as { providers: Record<string, { baseUrl: string }> };
  for (const provider of Object.values(example.providers)) provider.baseUrl = llm.baseUrl("openai-chat");
  writeFileSync(join(dir, "config/gateway.json"), JSON.stringify(example, null, 2));

  const variables = parseEnv(readFileSync(join(dir, ".env"), "utf8"));
  project = loadComposeProject(join(ROOT, "docker-compose.yml"), dir, variables);
  plan = await planLocalCompose(project, dockerfileEnv(join(ROOT, "Dockerfile")), {
    endpoints: { "nats:4222": hostPort(bus.natsUrl, 4222), "postgres:5432": hostPort(ADMIN_DATABASE_URL, 5432) },
    busPrefix: bus.prefix,
    databaseUrl: db.url,
    volumesDir: join(dir, "volumes"),
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await llm?.stop();
  await bus?.cleanup();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("docker-compose.yml wiring", () => {
  it("points the store at the postgres service's own user, password and database, and every service at one JetStream NATS", () => {
    const postgres = serviceEnvironment(project, "postgres", {});
    const url = new URL(serviceEnvironment(project, "store", {})["DATABASE_URL"]!);
    expect({ host: url.hostname, port: url.port, user: url.username, password: decodeURIComponent(url.password), database: url.pathname.slice(1) }).toEqual({
      host: "postgres",
      port: "5432",
      user: postgres["POSTGRES_USER"],
      password: postgres["POSTGRES_PASSWORD"],
      database: postgres["POSTGRES_DB"],
    });
    expect(project.document.services["nats"]?.command).toContain("-js");
    const buses = new Set(["store", "provider-gateway", "run-worker", "cursor-adapter", "edge-proxy"].map((s) => serviceEnvironment(project, s, {})["BUS_PREFIX"]));
    expect([...buses]).toEqual(["byok"]);
  });

  it("starts every service with its compose command and environment, and serves a member's turn through the published proxy port", async () => {
    gateway = await startLocalCompose(plan);
    const names = gateway.services.map((s) => s.name);
    expect(names.filter((n) => n.startsWith("run-worker"))).toHaveLength(project.document.services["run-worker"]?.deploy?.replicas ?? 1);

    // What members reach: the published port.
    const proxyUrl = `http://127.0.0.1:${plan.publishedPort("edge-proxy", 8080)}`;
    expect((await fetch(`${proxyUrl}/healthz`)).status).toBe(200);
    const ca = await (await fetch(`${proxyUrl}/ca.crt`)).text();
    // The CA lives in the edge-proxy-ca volume, so it survives a container re-creation.
    expect(readFileSync(join(dir, "volumes", "edge-proxy-ca", "ca", "ca.crt"), "utf8")).toBe(ca);

    // `docker compose exec edge-proxy npm run admin -- create alice --json`: the admin CLI with the container's environment.
    const { stdout } = await run(process.execPath, [join(ROOT, "services/admin/src/cli/main.ts"), "create", "alice", "--json"], { cwd: ROOT, env: plan.envOf("edge-proxy"), timeout: 30_000 });
    const key = (JSON.parse(stdout) as { key: string }).key;
    expect(key).not.toBe("");

    llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const client = new FakeCursorClient({
      transport: { baseUrl: "https://api2.cursor.sh", proxy: { url: proxyUrl, authorization: `Basic ${Buffer.from(`alice:${key}`).toString("base64")}` }, ca },
    });
    try {
      const modelId = (JSON.parse(readFileSync(join(dir, "config/gateway.json"), "utf8")) as { models: { id: string }[] }).models[0]!.id;
      const result = await client.conversation().send("hello", { modelId }).finished;
      expect(result.end, `${result.describe()}\n${gateway.output()}`).toEqual({ kind: "ok", metadata: {} });
      expect(result.text).toBe(readChatFixture(TEXT_FIXTURE).text);
    } finally {
      await client.close();
    }
    // The same member key works on the published OpenAI/Anthropic-compatible API (docs/inbound-api.md).
    const inboundUrl = `http://127.0.0.1:${plan.publishedPort("provider-gateway", 8090)}`;
    const models = await fetch(`${inboundUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status, gateway.output()).toBe(200);
    expect(((await models.json()) as { data: { id: string }[] }).data.length).toBeGreaterThan(0);
    expect((await fetch(`${inboundUrl}/v1/models`, { headers: { authorization: "Bearer not-a-member-key" } })).status).toBe(401);

    // The admin page on its published loopback port takes the token from .env and shows the new member.
    const adminUrl = `http://127.0.0.1:${plan.publishedPort("admin", 8091)}`;
    const adminToken = parseEnv(readFileSync(join(dir, ".env"), "utf8"))["ADMIN_TOKEN"];
    const members = (await (await fetch(`${adminUrl}/api/members`, { headers: { authorization: `Bearer ${adminToken}` } })).json()) as { members: { name: string }[] };
    expect(members.members.map((m) => m.name)).toContain("alice");
    expect((await fetch(`${adminUrl}/api/members`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);

    // The provider key came from keys.env, and only the provider gateway has it.
    expect(llm.requests.at(-1)?.headers["authorization"]).toBe(`Bearer ${parseEnv(readFileSync(join(dir, "keys.env"), "utf8"))["OPENAI_API_KEY"]}`);
    for (const service of ["store", "run-worker", "cursor-adapter", "edge-proxy", "admin"]) expect(plan.envOf(service)["OPENAI_API_KEY"], service).toBeUndefined();
  }, 120_000);
});
