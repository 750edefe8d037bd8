/**
 * End to end, the way a member's Cursor sees it: a fake Cursor client speaks
 * RunSSE + BidiAppend over real HTTP to the cursor adapter; store, provider
 * gateway and run worker run for real on NATS + Postgres; the LLM is a mock
 * replaying a recorded OpenAI stream.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toBinary } from "@bufbuild/protobuf";
import { RunStatus } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { chatMessages, textOf } from "@byok/test-support/chat-requests";
import { type CheckpointRecord, type RunResult, type TimelineEntry } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const expected = readChatFixture(TEXT_FIXTURE);

/** Frames from turn_ended to the end, heartbeats left out (they may come anywhere). */
function tail(result: RunResult): string[] {
  const frames = result.timeline.filter((e) => e.kind === "frame" || e.kind === "end").filter((e) => e.label !== "heartbeat");
  const start = frames.findIndex((e) => e.label === "turn_ended");
  return start < 0 ? [] : frames.slice(start).map((e) => e.label);
}

function assistantText(message: unknown): string {
  const m = message as { role?: string; content?: unknown };
  if (m.role !== "assistant") throw new Error(`expected an assistant root, got ${JSON.stringify(m).slice(0, 200)}`);
  if (typeof m.content === "string") return m.content;
  return (m.content as Array<{ type: string; text?: string }>)
    .filter((p) => p.type === "text")
    .map((p) => p.text ?? "")
    .join("");
}

function checkpointsAfterTurnEnded(result: RunResult): CheckpointRecord[] {
  return result.checkpoints.filter((c) => !c.beforeTurnEnded);
}

describe("spine: a text turn through the whole gateway", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("streams the model's text, publishes checkpoints only over ACKed blobs, ends with the captured tail, and stores the revision chain", async () => {
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const client = gw.client();
    const chat = client.conversation();
    // ACKs arrive late on purpose: a checkpoint sent before its blobs' ACKs shows up as a violation.
    const result = await chat.send("What's the weather in San Francisco right now?", { modelId: gw.modelId, kv: { ackDelayMs: () => 40 } }).finished;
    const frames = result.describe();

    expect(result.end, frames).toEqual({ kind: "ok", metadata: {} });
    expect(result.violations, frames).toEqual([]);
    expect(result.text, frames).toBe(expected.text);

    // turn_ended -> staged -> settled -> the same settled again -> EndStream {}
    expect(tail(result), frames).toEqual(["turn_ended", "checkpoint:staged", "checkpoint:settled", "checkpoint:settled", "end:ok"]);
    const [staged, settled, again] = checkpointsAfterTurnEnded(result);
    expect(toBinary(agent.ConversationStateStructureSchema, again!.state)).toEqual(toBinary(agent.ConversationStateStructureSchema, settled!.state));

    // Blobs were really exchanged (the ACK check above is not vacuous) and the checkpoint roots resolve.
    const kvSets = result.timeline.filter((e: TimelineEntry) => e.kind === "frame" && e.label.startsWith("kv_set#"));
    expect(kvSets.length, frames).toBeGreaterThan(0);
    for (const id of settled!.state.rootPromptMessagesJson) expect(client.blobs.has(id)).toBe(true);

    // Staged: the answer is pending, roots without it. Settled: the answer folded into the roots.
    expect(staged!.state.pendingToolCalls).toHaveLength(1);
    expect(assistantText(JSON.parse(staged!.state.pendingToolCalls[0]!))).toBe(expected.text);
    expect(settled!.state.pendingToolCalls).toHaveLength(0);
    const stagedRoots = staged!.state.rootPromptMessagesJson.map((r) => Buffer.from(r).toString("hex"));
    const settledRoots = settled!.state.rootPromptMessagesJson.map((r) => Buffer.from(r).toString("hex"));
    expect(settledRoots.slice(0, -1)).toEqual(stagedRoots);
    expect(assistantText(client.blobs.json(settled!.state.rootPromptMessagesJson.at(-1)!))).toBe(expected.text);

    // turn_ended carries the provider's usage, nothing invented.
    const usage = expected.usage!;
    expect(result.turnEnded?.inputTokens).toBe(BigInt(usage.inputTokens));
    expect(result.turnEnded?.outputTokens).toBe(BigInt(usage.outputTokens));
    expect(result.turnEnded?.cacheReadTokens).toBe(usage.cachedInputTokens === undefined ? undefined : BigInt(usage.cachedInputTokens));
    expect(result.turnEnded?.cacheWriteTokens).toBeUndefined();
    expect(result.turnEnded?.reasoningTokens).toBe(usage.reasoningTokens === undefined ? undefined : BigInt(usage.reasoningTokens));

    // The model saw the user's message last.
    const [request] = gw.llm.requestsTo("openai-chat");
    const sent = chatMessages(request);
    expect(sent.at(-1)?.role).toBe("user");
    expect(textOf(sent.at(-1)?.content)).toContain("What's the weather in San Francisco right now?");

    // The store: the run completed, the conversation head holds [.., user, assistant] as a revision chain.
    const run = { run: await gw.endedRun(result.requestId) };
    expect(run.run?.status).toBe(RunStatus.COMPLETED);
    expect(run.run?.usage?.inputTokens).toBe(BigInt(usage.inputTokens));
    expect(run.run?.usage?.outputTokens).toBe(BigInt(usage.outputTokens));
    const conversation = await gw.store("getConversation", { conversationId: chat.id });
    expect(conversation.error).toBeUndefined();
    expect(conversation.headRevisionId).toBe(run.run?.headRevisionId);
    const history = await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId });
    expect(history.error).toBeUndefined();
    expect(history.revisionChain.at(-1)).toBe(conversation.headRevisionId);
    expect(history.revisionChain.length).toBeGreaterThanOrEqual(2);
    const last = history.messages.at(-1)?.body;
    expect(last?.case).toBe("assistant");
    const lastText = last?.case === "assistant" ? last.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("") : "";
    expect(lastText).toBe(expected.text);
    const user = history.messages.at(-2)?.body;
    expect(user?.case).toBe("user");
  });

  it("does not hold the model call for the client's blob ACKs; the checkpoints still wait for them", async () => {
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const chat = gw.client().conversation();
    const result = await chat.send("Hello there", { modelId: gw.modelId, kv: { ackDelayMs: () => 1500 } }).finished;
    expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
    expect(result.violations, result.describe()).toEqual([]);
    const firstAck = result.timeline.find((e: TimelineEntry) => e.kind === "append" && e.label.startsWith("kv_ack#"));
    expect(firstAck, result.describe()).toBeDefined();
    const [request] = gw.llm.requestsTo("openai-chat");
    // Both clocks in epoch milliseconds (the fake client and the mock live in this process).
    expect(request!.receivedAt).toBeLessThan(performance.timeOrigin + firstAck!.at);
    const firstCheckpoint = result.timeline.find((e: TimelineEntry) => e.kind === "frame" && e.label.startsWith("checkpoint:"));
    expect(firstCheckpoint!.order).toBeGreaterThan(firstAck!.order);
  });

  for (const start of ["stream-first", "append-first"] as const) {
    it(`works whichever half arrives first (${start}, gzip first append)`, async () => {
      gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
      const result = await gw.client().conversation().send("hello", { modelId: gw.modelId, start, gzipFirstAppend: true }).finished;
      expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
      expect(result.violations, result.describe()).toEqual([]);
      expect(result.text).toBe(expected.text);
    });
  }

  it("continues from the settled checkpoint: turn 1 is in the model request, in order, as an exact prefix", async () => {
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const chat = gw.client().conversation();
    const first = await chat.send("First question: what is the weather?", { modelId: gw.modelId }).finished;
    expect(first.end, first.describe()).toEqual({ kind: "ok", metadata: {} });
    expect(chat.state.rootPromptMessagesJson.length).toBeGreaterThan(0);

    const second = await chat.send("Second question: and tomorrow?", { modelId: gw.modelId }).finished;
    expect(second.end, second.describe()).toEqual({ kind: "ok", metadata: {} });
    expect(second.violations, second.describe()).toEqual([]);

    const [call1, call2] = gw.llm.requestsTo("openai-chat");
    const turn1 = chatMessages(call1);
    const turn2 = chatMessages(call2);
    // Prefix stability: what turn 1 sent is, byte for byte, the start of what turn 2 sends.
    expect(turn2.slice(0, turn1.length)).toEqual(turn1);
    expect(JSON.stringify(turn2.slice(0, turn1.length))).toBe(JSON.stringify(turn1));
    // Then turn 1's answer, then the new question.
    expect(turn2.slice(turn1.length).map((m) => m.role)).toEqual(["assistant", "user"]);
    expect(textOf(turn2[turn1.length]!.content)).toBe(expected.text);
    expect(textOf(turn2.at(-1)!.content)).toContain("Second question: and tomorrow?");

    // The store recognised turn 1's history: turn 2 builds on turn 1's head, nothing duplicated.
    const run1 = await gw.store("getRun", { runId: first.requestId });
    const conversation = await gw.store("getConversation", { conversationId: chat.id });
    const history = await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId });
    expect(history.revisionChain).toContain(run1.run?.headRevisionId);
    const roles = history.messages.map((m) => m.body.case);
    expect(roles.slice(-4)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(roles.filter((r) => r === "assistant")).toHaveLength(2);
  });
});
