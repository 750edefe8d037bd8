/**
 * The run's command feed over real JetStream: the feed is handed out before it
 * has read the stored commands (the actor does not wait for it), so these check
 * that nothing is lost, applied twice or left behind because of that: commands
 * sent before the feed and while it reads the stream arrive in order and once,
 * a command stored twice under one command id is applied once, a closed feed
 * applies nothing more and leaves no consumer, and a feed whose stream is not
 * there yet keeps trying and reads the commands once it is.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { busNames, ClientCommandSchema, runCommandIds, type BusNames, type RunId } from "@byok/contracts";
import { ensureRunStreams, silentLogger } from "@byok/platform";
import { createTestBus, NATS_URL, waitFor, type TestBus } from "@byok/test-support/infra";
import { ABORTED } from "./abort.ts";
import { openRunCommandFeed, type RunCommandFeed, type StopCommand } from "./run-commands.ts";

const RUN_ID = "0b9f3a52-5d7e-4c1b-9a43-3f1e2d6c7a10" as RunId;

describe("run command feed", () => {
  let bus: TestBus;
  let names: BusNames;
  let nc: NatsConnection;
  let js: JetStreamClient;
  const feeds: RunCommandFeed[] = [];

  beforeEach(async () => {
    bus = createTestBus();
    names = busNames(bus.prefix);
    nc = await connect({ servers: NATS_URL });
    js = jetstream(nc);
  });
  afterEach(async () => {
    for (const feed of feeds.splice(0)) await feed.close();
    await nc.close();
    await bus.cleanup();
  });

  function open(onStop: (command: StopCommand) => void = () => undefined): RunCommandFeed {
    const feed = openRunCommandFeed({ nc, js, names, runId: RUN_ID, onStop, log: silentLogger() });
    feeds.push(feed);
    return feed;
  }

  /** `msgID`: the stream's deduplication id (by default the command id, as the adapter sends it). */
  async function sendToolResult(callId: string, text: string, msgID?: string): Promise<void> {
    const commandId = runCommandIds.toolResult(RUN_ID, callId);
    const command = create(ClientCommandSchema, { commandId, command: { case: "toolResult", value: { callId, content: text } } });
    await js.publish(names.runCommands(RUN_ID), toBinary(ClientCommandSchema, command), { msgID: msgID ?? commandId });
  }

  async function sendCancel(reason: string): Promise<void> {
    const commandId = runCommandIds.cancel(RUN_ID);
    const command = create(ClientCommandSchema, { commandId, command: { case: "cancel", value: { reason } } });
    await js.publish(names.runCommands(RUN_ID), toBinary(ClientCommandSchema, command), { msgID: commandId });
  }

  async function consumerCount(): Promise<number> {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(names.commandsStream)).state.consumer_count;
  }

  it("reads commands sent before the feed and while it reads the stream, in order", async () => {
    await ensureRunStreams(nc, names);
    await sendToolResult("call_1", "before the feed");
    const stops: StopCommand[] = [];
    const feed = open((command) => stops.push(command));
    // Published right away: the feed's read of the stream is in flight when this leaves.
    const sent = sendToolResult("call_2", "while the stream is read");
    const signal = new AbortController().signal;
    const first = await feed.nextToolResult(signal);
    await sent;
    const second = await feed.nextToolResult(signal);
    expect(first !== ABORTED && first.callId).toBe("call_1");
    expect(second !== ABORTED && second.callId).toBe("call_2");
    await sendCancel("stop it");
    await waitFor(() => stops.length > 0, "the cancel to reach onStop");
    expect(stops).toEqual([{ kind: "cancel", reason: "stop it" }]);
  });

  it("applies a command stored twice (a publish repeated past the stream's duplicate window) once", async () => {
    await ensureRunStreams(nc, names);
    await sendToolResult("call_1", "first", "attempt-1");
    await sendToolResult("call_1", "first", "attempt-2");
    const feed = open();
    await sendToolResult("call_1", "first", "attempt-3");
    await sendToolResult("call_2", "second");
    const signal = new AbortController().signal;
    const first = await feed.nextToolResult(signal);
    const second = await feed.nextToolResult(signal);
    expect(first !== ABORTED && first.callId).toBe("call_1");
    expect(second !== ABORTED && second.callId).toBe("call_2");
  });

  it("applies nothing once closed and leaves no consumer on the server", async () => {
    await ensureRunStreams(nc, names);
    const stopsOfClosed: StopCommand[] = [];
    const closedFeed = open((command) => stopsOfClosed.push(command));
    await closedFeed.close();
    await sendCancel("after the close");
    // A feed opened later for the same run (a new owner) reads the cancel from the stream.
    const stopsOfNext: StopCommand[] = [];
    open((command) => stopsOfNext.push(command));
    await waitFor(() => stopsOfNext.length > 0, "the next feed to read the cancel");
    expect(stopsOfClosed).toEqual([]);
    expect(await consumerCount()).toBe(0);
  });

  it("keeps trying while the command stream is missing, and reads the commands once it exists", async () => {
    const feed = open();
    const result = feed.nextToolResult(new AbortController().signal);
    // The feed's first read finds no stream; it tries again after a pause.
    await ensureRunStreams(nc, names);
    await sendToolResult("call_late", "after the stream appeared");
    const got = await result;
    expect(got !== ABORTED && got.callId).toBe("call_late");
    await feed.close();
    expect(await consumerCount()).toBe(0);
  });
});
