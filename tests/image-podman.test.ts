/**
 * The gateway image built for real and run (opt-in: BYOK_IMAGE_TEST=1, which
 * .ci/run sets; skipped where podman is missing). podman builds the
 * Dockerfile on a local base image (infra/podman/base-image.sh: debootstrap +
 * Node from the npm registry, no registry pulls), then the five services run
 * from the image with --network host against the test's Postgres and NATS.
 * Checked: the proxy's /healthz and /ca.crt, and a member created with the
 * admin CLI inside the edge-proxy container (as `docker compose exec
 * edge-proxy npm run admin -- create <name>` would) whose key the proxy then
 * accepts. Everything the test creates (containers, volume, image) is
 * removed; the base image stays cached.
 */
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectThroughProxy, proxyAuthorization } from "../services/edge-proxy/src/test-support/proxy-client.ts";
import { freePort } from "@byok/local-infra/local-servers";
import { createTestBus, createTestDatabase, waitFor, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";

const ROOT = new URL("../", import.meta.url).pathname;
const run = promisify(execFile);

function podmanAvailable(): boolean {
  try {
    execFileSync("podman", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const enabled = process.env["BYOK_IMAGE_TEST"] === "1" && podmanAvailable();

async function podman(args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run("podman", args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`podman ${args.join(" ")} failed: ${e.message}\n${e.stderr ?? ""}${e.stdout ?? ""}`, { cause: err });
  }
}

describe.skipIf(!enabled)("the gateway image (podman)", () => {
  const id = randomBytes(4).toString("hex");
  const image = `localhost/byok-gateway-test:${id}`;
  const volume = `byok-test-${id}-ca`;
  const containers: string[] = [];
  let imageBuilt = false;
  let db: TestDatabase;
  let bus: TestBus;
  let llm: MockLlm;
  let dir: string;
  let proxyPort: number;

  const container = (service: string): string => `byok-test-${id}-${service}`;

  async function runService(service: string, env: Record<string, string>, extra: string[] = []): Promise<void> {
    const name = container(service);
    containers.push(name);
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    await podman(["run", "-d", "--name", name, "--network", "host", ...envArgs, ...extra, image, "node", `services/${service}/src/main.ts`]);
  }

  async function logsOf(service: string): Promise<string> {
    return podman(["logs", container(service)]).catch((err: Error) => err.message);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "byok-image-"));
    const baseStarted = Date.now();
    const { stdout: baseOut } = await run("bash", [join(ROOT, "infra/podman/base-image.sh")], { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 });
    const base = baseOut.trim().split("\n").at(-1)!;
    const buildStarted = Date.now();
    await podman(["build", "--network", "host", "--layers=false", "--build-arg", `BASE_IMAGE=${base}`, "-t", image, ROOT], 600_000);
    imageBuilt = true;
    console.log(`image test: base image ${base} ready in ${((buildStarted - baseStarted) / 1000).toFixed(1)} s; podman build ${((Date.now() - buildStarted) / 1000).toFixed(1)} s`);

    db = await createTestDatabase();
    bus = createTestBus();
    llm = await startMockLlm();
    const example = JSON.parse(readFileSync(join(ROOT, "config/gateway.example.json"), "utf8")) as { providers: Record<string, { baseUrl: string }> };
    for (const provider of Object.values(example.providers)) provider.baseUrl = llm.baseUrl("openai-chat");
    writeFileSync(join(dir, "gateway.json"), JSON.stringify(example));
    writeFileSync(join(dir, "keys.env"), readFileSync(join(ROOT, "infra/keys.env.example"), "utf8"));
    await podman(["volume", "create", volume]);

    const adapterPort = await freePort();
    proxyPort = await freePort();
    const bus_ = { NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, LOG_LEVEL: "info" };
    const configMount = ["-v", `${join(dir, "gateway.json")}:/app/config/gateway.json:ro`];
    await runService("store", { ...bus_, DATABASE_URL: db.url });
    await runService("provider-gateway", { ...bus_, GATEWAY_CONFIG: "/app/config/gateway.json" }, [...configMount, "--env-file", join(dir, "keys.env")]);
    await runService("run-worker", bus_);
    await runService("cursor-adapter", { ...bus_, HOST: "127.0.0.1", PORT: String(adapterPort), GATEWAY_CONFIG: "/app/config/gateway.json" }, configMount);
    await runService(
      "edge-proxy",
      {
        ...bus_,
        PROXY_HOST: "127.0.0.1",
        PROXY_PORT: String(proxyPort),
        ADAPTER_URL: `http://127.0.0.1:${adapterPort}`,
        UPSTREAM_ORIGIN: "http://127.0.0.1:9",
        CA_DIR: "/app/.data/edge-proxy/ca",
        GATEWAY_CONFIG: "/app/config/gateway.json",
      },
      [...configMount, "-v", `${volume}:/app/.data/edge-proxy`],
    );
  }, 900_000);

  afterAll(async () => {
    for (const name of containers.reverse()) await podman(["rm", "-f", "-t", "5", name]).catch(() => undefined);
    await podman(["volume", "rm", "-f", volume]).catch(() => undefined);
    if (imageBuilt) await podman(["rmi", "-f", image]).catch(() => undefined);
    await llm?.stop();
    await bus?.cleanup();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  it("serves /healthz and the team CA from the volume, and creates a member with the admin CLI inside the container", async () => {
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    await waitFor(
      async () => (await fetch(`${proxyUrl}/healthz`).then((r) => r.status === 200, () => false)) || undefined,
      "the edge proxy's /healthz",
      60_000,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await logsOf("edge-proxy")}\n${await logsOf("store")}`, { cause: err });
    });
    const ca = await (await fetch(`${proxyUrl}/ca.crt`)).text();
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(await podman(["exec", container("edge-proxy"), "cat", "/app/.data/edge-proxy/ca/ca.crt"])).toBe(ca);

    const created = JSON.parse(await podman(["exec", container("edge-proxy"), "npm", "run", "--silent", "admin", "--", "create", "alice", "--json"])) as {
      member: { memberId: string; name: string };
      key: string;
    };
    expect(created.member.name).toBe("alice");
    const admitted = await connectThroughProxy({ port: proxyPort, authorization: proxyAuthorization(created.key, "alice") }, "api2.cursor.sh:443");
    expect(admitted.kind).toBe("established");
    if (admitted.kind === "established") admitted.socket.destroy();
    const refused = await connectThroughProxy({ port: proxyPort, authorization: proxyAuthorization("not-a-key", "alice") }, "api2.cursor.sh:443");
    expect(refused).toMatchObject({ kind: "refused", status: 407 });
  }, 120_000);
});
