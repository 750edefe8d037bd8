/**
 * A three-node JetStream cluster of private nats-server processes on loopback
 * (free client and route ports, a store directory each, removed with the
 * test's processes): for the cluster failure test. `kill(node)` is SIGKILL:
 * the node is gone as a crashed host would be.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { freePort } from "@byok/local-infra/local-servers";
import type { TestProcess, TestProcesses } from "./failover-support.ts";

export interface ClusterNode {
  readonly name: string;
  readonly url: string;
  readonly process: TestProcess;
}

export class NatsCluster {
  readonly nodes: readonly ClusterNode[];

  private constructor(nodes: readonly ClusterNode[]) {
    this.nodes = nodes;
  }

  /** Every node's client URL, comma-separated (what NATS_URL takes). */
  get url(): string {
    return this.nodes.map((n) => n.url).join(",");
  }

  static async start(group: TestProcesses, size = 3): Promise<NatsCluster> {
    const dir = await mkdtemp(join(tmpdir(), "byok-nats-cluster-"));
    group.onStopped(() => rm(dir, { recursive: true, force: true }));
    const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort() })));
    const routes = ports.map((p) => `nats://127.0.0.1:${p.route}`).join(",");
    const nodes = ports.map((p, i): ClusterNode => {
      const name = `n${i + 1}`;
      const args = ["-a", "127.0.0.1", "-p", String(p.client), "-n", name, "-js", "-sd", join(dir, name), "--cluster_name", "byok-test"];
      args.push("-cluster", `nats://127.0.0.1:${p.route}`, "-routes", routes);
      return { name, url: `nats://127.0.0.1:${p.client}`, process: group.spawn(`nats-server ${name}`, "nats-server", args, {}) };
    });
    await Promise.all(nodes.map((n) => n.process.waitForLine(/Server is ready/, `${n.name} to be ready`)));
    const cluster = new NatsCluster(nodes);
    await cluster.jetStreamReady();
    return cluster;
  }

  node(name: string): ClusterNode {
    const node = this.nodes.find((n) => n.name === name);
    if (node === undefined) throw new Error(`no cluster node ${name}`);
    return node;
  }

  /** SIGKILL one node; resolves once it has exited. */
  async kill(name: string): Promise<void> {
    await this.node(name).process.kill("SIGKILL");
  }

  /** A connection to the nodes still running. */
  connect(): Promise<NatsConnection> {
    return connect({ servers: this.nodes.filter((n) => n.process.running).map((n) => n.url) });
  }

  /** Waits until the cluster has a JetStream meta leader that answers (an R3 stream can be placed). */
  private async jetStreamReady(timeoutMs = 20_000): Promise<void> {
    const nc = await this.connect();
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          // Until a meta leader is elected every JetStream request times out.
          const jsm = await jetstreamManager(nc, { timeout: 2_000 });
          await jsm.streams.add({ name: "CLUSTER_READY", subjects: ["cluster-ready.>"], num_replicas: this.nodes.length >= 3 ? 3 : 1 });
          await jsm.streams.delete("CLUSTER_READY");
          return;
        } catch (err) {
          if (Date.now() > deadline) throw new Error(`the JetStream cluster is not ready after ${timeoutMs} ms: ${(err as Error).message}`, { cause: err });
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    } finally {
      await nc.close();
    }
  }

  output(): string {
    return this.nodes.map((n) => `--- ${n.name}\n${n.process.output()}`).join("\n");
  }
}
