/**
 * Several cursor adapters and edge proxies, as behind a load balancer that
 * sends each request anywhere: a run's RunSSE reaches one instance, its
 * BidiAppends another (every append also repeated on the other instance, as a
 * client retry would be). A text turn and a tool round complete; the adapter
 * holding the RunSSE received every append exactly once, in seqno order
 * (its delivery log), and the other instance delivered none; member bindings
 * hold across instances.
 */
import { afterEach, describe, expect, it } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { agent, type tools } from "@byok/cursor-protocol";
import { RunStatus } from "@byok/contracts";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { FakeCursorClient, buildRunRequest, emptyConversationState, type CursorRun, type RunResult } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";
import type { LogCapture } from "@byok/test-support/service-logger";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { enqueueChat, execArgs, finishedOk, readSuccess } from "./tools-support.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const expected = readChatFixture(TEXT_FIXTURE);
const FILE = { path: "/home/dev/project/src/a.ts", content: "export const a = 1;\n" };
const READ_CALL = "call_scaleout_read_1";

interface Delivery {
  service: string;
  seqno: number;
}

/** What the adapters' registries handed to run sessions for one request id (the run_request counts as seqno 0). */
function deliveries(logs: LogCapture, requestId: string): Delivery[] {
  const out: Delivery[] = [];
  for (const line of logs.lines) {
    const entry = JSON.parse(line) as { service?: string; msg?: string; request_id?: string; append_seqno?: number };
    if (entry.request_id !== requestId) continue;
    if (entry.msg === "run session opened") out.push({ service: entry.service ?? "", seqno: 0 });
    if (entry.msg === "append delivered") out.push({ service: entry.service ?? "", seqno: entry.append_seqno ?? -1 });
  }
  return out;
}

function appendsSent(result: RunResult): number[] {
  return result.timeline.flatMap((e) => (e.kind === "append" ? [e.seqno] : []));
}

/** Every append the client sent reached the owner once, in seqno order, and no other instance. */
function expectExactlyOnceInOrder(logs: LogCapture, result: RunResult, owner: string): void {
  const sent = appendsSent(result);
  const got = deliveries(logs, result.requestId);
  expect(got.map((d) => d.service)).toEqual(got.map(() => owner));
  expect(got.map((d) => d.seqno)).toEqual([...sent].sort((a, b) => a - b));
  expect(got.map((d) => d.seqno)).toEqual(sent.map((_, i) => i));
}

function readTurn(gw: GatewayHarness, client: FakeCursorClient, conversationId: string): CursorRun {
  enqueueChat(gw, { id: "chatcmpl-scaleout-1", text: "Reading it.", calls: [{ id: READ_CALL, name: "Read", args: { path: FILE.path } }] });
  gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
  return client.conversation(conversationId).send("What does a.ts export?", {
    modelId: gw.modelId,
    heartbeatMs: 0,
    onExec: {
      readArgs: async (ctx) => {
        await ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, FILE.content));
      },
    },
  });
}

/** The tool round happened once: one result in the model's next request, one pair in the stored history. */
async function expectOneToolResult(gw: GatewayHarness, result: RunResult, conversationId: string): Promise<void> {
  const [, second] = gw.llm.requestsTo("openai-chat").slice(-2);
  const loop = afterLastUser(chatMessages(second));
  expect(loop.map((m) => m.role)).toEqual(["assistant", "tool"]);
  expect(textOf(loop[1]!.content)).toBe(FILE.content);
  const run = await gw.endedRun(result.requestId);
  expect(run?.status).toBe(RunStatus.COMPLETED);
  const conversation = await gw.store("getConversation", { conversationId });
  const history = await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId });
  const kinds = history.messages.map((m) => m.body.case);
  expect(kinds.slice(kinds.lastIndexOf("user") + 1)).toEqual(["assistant", "toolResult", "assistant"]);
}

describe("any instance takes any request", () => {
  let gw: GatewayHarness | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("two adapters: RunSSE on one, every append on the other (and repeated on the first): text turn and tool round, each append delivered once, in order, by the RunSSE's adapter", async () => {
    const logs: LogCapture = { level: "debug", lines: [] };
    gw = await startGateway({ adapters: 2, logs });
    const [first, second] = gw.adapterUrls as [string, string];
    const client = gw.client({ transport: { baseUrl: first }, appendTransports: [{ baseUrl: second }], repeatAppends: true });

    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const text = await finishedOk(client.conversation().send("hello", { modelId: gw.modelId, heartbeatMs: 0 }));
    expect(text.violations, text.describe()).toEqual([]);
    expect(text.text).toBe(expected.text);
    expectExactlyOnceInOrder(logs, text, "cursor-adapter-1");

    const conversationId = "scale-out-tool-conversation";
    const tool = await finishedOk(readTurn(gw, client, conversationId));
    expect(tool.violations, tool.describe()).toEqual([]);
    expect(tool.text).toContain(expected.text);
    expectExactlyOnceInOrder(logs, tool, "cursor-adapter-1");
    await expectOneToolResult(gw, tool, conversationId);
  });

  it("two adapters: a run_request sent to one before the RunSSE reaches the other is held there and the run completes (appends alternate)", async () => {
    const logs: LogCapture = { level: "debug", lines: [] };
    gw = await startGateway({ adapters: 2, logs });
    const [first, second] = gw.adapterUrls as [string, string];
    // seqno 0 (and every even seqno) to the second adapter; the client waits for its answer before opening RunSSE on the first.
    const client = gw.client({ transport: { baseUrl: first }, appendTransports: [{ baseUrl: second }, { baseUrl: first }] });
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const result = await finishedOk(client.conversation().send("hello", { modelId: gw.modelId, heartbeatMs: 0, start: "append-first" }));
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toBe(expected.text);
    expectExactlyOnceInOrder(logs, result, "cursor-adapter-1");
  });

  it("two proxies in front of two adapters: RunSSE through one, appends through the other; member bindings hold across instances", async () => {
    const logs: LogCapture = { level: "debug", lines: [] };
    gw = await startGateway({ adapters: 2, edgeProxies: 2, logs });
    const [p1, p2] = gw.edges as [NonNullable<GatewayHarness["edge"]>, NonNullable<GatewayHarness["edge"]>];
    const alice = await p1.createMember("alice");
    const mallory = await p1.createMember("mallory");
    const aliceClient = p1.client({ name: "alice", key: alice.key }, { appendVia: [p2], repeatAppends: true });

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    enqueueChat(gw, { id: "chatcmpl-scaleout-2", text: "Reading it.", calls: [{ id: READ_CALL, name: "Read", args: { path: FILE.path } }] });
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const chat = aliceClient.conversation();
    const run = chat.send("What does a.ts export?", {
      modelId: gw.modelId,
      heartbeatMs: 0,
      onExec: {
        readArgs: async (ctx) => {
          await held;
          await ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, FILE.content));
        },
      },
    });
    await run.waitForFrame((m) => m.message.case === "execServerMessage", "the Read exec");

    // While alice's run waits for its tool result: mallory, through either proxy, cannot touch its request id.
    for (const proxy of [p1, p2]) {
      const asMallory = proxy.client({ name: "mallory", key: mallory.key });
      const heartbeat = create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
      const answer = await asMallory.bidiAppendRaw({ requestId: run.requestId, seqno: 50, data: Buffer.from(toBinary(agent.AgentClientMessageSchema, heartbeat)).toString("hex") });
      expect(answer.status).toBe(403);
    }
    // Straight to the adapter that does not hold the RunSSE (no proxy in between): it asks the owner, which refuses mallory.
    const direct = new FakeCursorClient({ transport: { baseUrl: gw.adapterUrls[1]! }, headers: { "x-byok-member-id": mallory.memberId } });
    const hijack = await direct.startRun({
      requestId: run.requestId,
      heartbeatMs: 0,
      runRequest: buildRunRequest({ conversationId: chat.id, conversationState: emptyConversationState(), model: { via: "requested_model", modelId: gw.modelId }, action: { kind: "user_message", text: "mine now" } }),
    }).finished;
    expect(hijack.end).toMatchObject({ kind: "error", code: "permission_denied" });
    await direct.close();
    // A turn on alice's conversation through the proxy that never saw it: the proxy lets it pass, the store refuses it.
    const stolen = await p1
      .client({ name: "mallory", key: mallory.key })
      .conversation(chat.id)
      .send("and now for me", { modelId: gw.modelId, heartbeatMs: 0 }).finished;
    expect(stolen.end).toMatchObject({ kind: "error", code: "permission_denied" });

    release();
    const result = await finishedOk(run);
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toContain(expected.text);
    expectExactlyOnceInOrder(logs, result, "cursor-adapter-1");
    await expectOneToolResult(gw, result, chat.id);
  });
});
