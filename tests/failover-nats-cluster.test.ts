/**
 * The gateway on a three-node JetStream cluster: its run streams are
 * replicated three times, and the node leading them dies (SIGKILL) while
 * twenty conversations wait in a tool round. Every run completes, and the
 * store holds each run's tool round once (no result lost, none appended
 * twice); the command stream holds one result per run. The bus payload
 * bucket is replicated like the run streams.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import type { tools } from "@byok/cursor-protocol";
import { RunStatus, busNames, parseRunId } from "@byok/contracts";
import { BusPayloads, ensureRunStreams } from "@byok/platform";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";
import { createTestBus, waitFor } from "@byok/test-support/infra";
import { storedHistory } from "@byok/test-support/stored-messages";
import { TestProcesses } from "./failover-support.ts";
import { NatsCluster } from "./nats-cluster-support.ts";
import { enqueueChat, execArgs, readSuccess } from "./tools-support.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const expected = readChatFixture(TEXT_FIXTURE);
const CONVERSATIONS = 20;
const FILE = { path: "/home/dev/project/README.md", content: "# project\n" };

describe("a NATS cluster node dies", () => {
  let processes: TestProcesses;
  let cluster: NatsCluster;
  let gw: GatewayHarness | undefined;
  beforeEach(async () => {
    processes = new TestProcesses();
    cluster = await NatsCluster.start(processes);
  }, 60_000);
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    await processes.stopAll();
  }, 60_000);

  it("runs replicated three times survive the loss of their streams' leader: twenty tool-round conversations complete, each result stored once", async () => {
    gw = await startGateway({ natsUrl: cluster.url, workers: 2 });
    const harness = gw;
    const jsm = await jetstreamManager(harness.nc);
    for (const stream of [harness.names.runsStream, harness.names.commandsStream]) {
      // A cluster that has just formed may take longer than one API request's timeout to answer.
      const info = await waitFor(() => jsm.streams.info(stream).catch(() => undefined), `${stream}'s info`, 60_000);
      expect(info.config.num_replicas, stream).toBe(3);
    }

    let killed!: () => void;
    const afterKill = new Promise<void>((resolve) => (killed = resolve));
    let execs = 0;
    for (let i = 0; i < CONVERSATIONS; i++) {
      enqueueChat(harness, { id: `chatcmpl-cluster-${i}`, text: "Reading it.", calls: [{ id: `call_cluster_${i}`, name: "Read", args: { path: FILE.path } }] });
    }
    const client = harness.client();
    const chats = Array.from({ length: CONVERSATIONS }, () => client.conversation());
    const runs = chats.map((chat, i) =>
      chat.send(`question ${i}: what is in the README?`, {
        modelId: harness.modelId,
        onExec: {
          readArgs: async (ctx) => {
            execs += 1;
            await afterKill;
            await ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, FILE.content));
          },
        },
      }),
    );

    // Every run is in its tool round, waiting for the client's result: kill the node leading the streams.
    await waitFor(() => execs === CONVERSATIONS, "every run to wait for its tool result", 60_000);
    const leader = (await jsm.streams.info(harness.names.commandsStream)).cluster?.leader;
    expect(leader, cluster.output()).toBeDefined();
    await cluster.kill(leader!);
    for (let i = 0; i < CONVERSATIONS; i++) harness.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    killed();

    const results = await Promise.all(runs.map((r) => r.finished));
    for (const result of results) {
      expect(result.end, `${result.describe()}\n${result.violations.join("\n")}`).toEqual({ kind: "ok", metadata: {} });
      expect(result.text).toContain(expected.text);
    }

    // The cluster's JetStream API may still be electing leaders (on a busy machine, past one request's
    // timeout): ask until it answers.
    const commands = await waitFor(
      () => jsm.streams.info(harness.names.commandsStream, { subjects_filter: ">" }).catch(() => undefined),
      "the command stream's info after the failover",
      60_000,
    );
    expect(commands.cluster?.leader).not.toBe(leader);
    for (const [i, result] of results.entries()) {
      const run = await harness.endedRun(result.requestId);
      expect(run?.status, result.requestId).toBe(RunStatus.COMPLETED);
      const kinds = (await storedHistory(harness, chats[i]!.id)).map((m) => m.body.case);
      expect(kinds.slice(kinds.lastIndexOf("user") + 1), result.requestId).toEqual(["assistant", "toolResult", "assistant"]);
      // One command on the run's subject: its tool result, published again across the failover but stored once.
      expect(commands.state.subjects?.[harness.names.runCommands(parseRunId(result.requestId))], result.requestId).toBe(1);
    }
  }, 150_000);

  it("replicates the bus payload bucket three times, like the run streams (a large tool result's payload survives what its command survives)", async () => {
    const nc = await cluster.connect();
    try {
      const names = busNames(createTestBus().prefix);
      await ensureRunStreams(nc, names, { replicas: 3 });
      const sent = new Uint8Array(nc.info!.max_payload + 1).fill(7);
      const outgoing = await BusPayloads.of(nc, names).outgoing(sent);
      const jsm = await jetstreamManager(nc);
      expect((await jsm.streams.info(`OBJ_${names.payloadsBucket}`)).config.num_replicas).toBe(3);
      expect((await BusPayloads.of(nc, names).incoming(outgoing)).length).toBe(sent.length);
    } finally {
      await nc.close();
    }
  }, 60_000);
});
