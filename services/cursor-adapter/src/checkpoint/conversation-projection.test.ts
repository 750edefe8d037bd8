import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, UsageSchema, UserOrigin, type Message } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { rootBytesOf, rootJsonOf, systemRootJson } from "../root-codec/root-json.ts";
import { blobIdOf, blobKey } from "./blob-id.ts";
import { BlobNotSyncedError, ClientBlobs } from "./client-blobs.ts";
import { ConversationProjection } from "./conversation-projection.ts";
import { KvError } from "./kv-channel.ts";
import { kvTestClient, type KvTestClient } from "./test-client.ts";

const encoder = new TextEncoder();
const key = (id: Uint8Array) => blobKey(id);

function user(clientId: string, text: string, origin = UserOrigin.USER): Message {
  return create(MessageSchema, { body: { case: "user", value: { clientId, origin, content: [{ part: { case: "text", value: { text } } }] } } });
}

const assistant = create(MessageSchema, {
  body: {
    case: "assistant",
    value: {
      content: [
        { part: { case: "reasoning", value: { text: "The user greets me." } } },
        { part: { case: "text", value: { text: "Hello!" } } },
      ],
    },
  },
});

const historyRootBytes = [rootBytesOf(user("old-1", "<user_query>\nfirst\n</user_query>")), encoder.encode('{"role":"assistant","id":"1","content":"first answer"}')];
const historyRoots = historyRootBytes.map(blobIdOf);
const oldTurn = blobIdOf(encoder.encode("old turn"));
const todo = blobIdOf(encoder.encode("todo"));
/** conversation_started_timestamp_ms (field 26), unknown to our schema subset. */
const unknownField = new Uint8Array([0xd0, 0x01, 0x2a]);

function baseState(): agent.ConversationStateStructure {
  const known = create(agent.ConversationStateStructureSchema, {
    rootPromptMessagesJson: [blobIdOf(encoder.encode(systemRootJson("old system"))), ...historyRoots],
    turns: [oldTurn],
    todos: [todo],
    tokenDetails: { usedTokens: 900, maxTokens: 5 },
    readPaths: ["/p/a.ts"],
  });
  const bytes = new Uint8Array([...toBinary(agent.ConversationStateStructureSchema, known), ...unknownField]);
  return fromBinary(agent.ConversationStateStructureSchema, bytes);
}

const userMessage = create(agent.UserMessageSchema, { text: "hi", messageId: "m-2", mode: agent.AgentMode.ASK });
const context = user("request-context:abc", "<user_info>\nShell: zsh\n</user_info>", UserOrigin.CONTEXT);
const userRoot = user("m-2", "<user_query>\nhi\n</user_query>");

function setup(client: KvTestClient) {
  const newRoots: Uint8Array[] = [];
  const blobs = new ClientBlobs(client.kv);
  const projection = new ConversationProjection({
    base: baseState(),
    blobs,
    systemText: "You are Sonnet.",
    historyRoots,
    contextWindow: 200_000,
    mode: agent.AgentMode.ASK,
    turn: { userMessage, requestId: "req-1" },
    onNewRoot: async (bytes) => void newRoots.push(bytes),
  });
  projection.appendInitialMessages([context, userRoot]);
  return { blobs, projection, newRoots };
}

/** A projection whose initial blobs the client has acknowledged. */
async function acknowledgedSetup() {
  const client = kvTestClient();
  const ready = setup(client);
  client.ackAllSets();
  await ready.projection.initialBlobsAcked();
  return { client, ...ready };
}

function setBlobs(client: KvTestClient): Map<string, Uint8Array> {
  const sets = new Map<string, Uint8Array>();
  for (const f of client.frames) {
    if (f.message.case === "kvServerMessage" && f.message.value.message.case === "setBlobArgs") {
      const { blobId, blobData } = f.message.value.message.value;
      expect(key(blobIdOf(blobData))).toBe(key(blobId));
      sets.set(key(blobId), blobData);
    }
  }
  return sets;
}

async function settles(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe("conversation projection", () => {
  it("SETs the system root, the new roots and the UserMessage, and waits for their ACKs", async () => {
    const client = kvTestClient();
    const { projection, newRoots } = setup(client);
    expect(newRoots.map((r) => new TextDecoder().decode(r))).toEqual([systemRootJson("You are Sonnet."), rootJsonOf(context), rootJsonOf(userRoot)]);
    const initial = projection.initialBlobsAcked();
    expect(await settles(initial)).toBe(false);

    const sets = setBlobs(client);
    const systemId = blobIdOf(encoder.encode(systemRootJson("You are Sonnet.")));
    expect(new TextDecoder().decode(sets.get(key(systemId)))).toBe('{"role":"system","content":"You are Sonnet."}');
    expect(sets.has(key(blobIdOf(rootBytesOf(context))))).toBe(true);
    expect(sets.has(key(blobIdOf(rootBytesOf(userRoot))))).toBe(true);
    expect(sets.has(key(blobIdOf(toBinary(agent.UserMessageSchema, userMessage))))).toBe(true);
    // The client's own roots are never sent back to it.
    for (const root of historyRoots) expect(sets.has(key(root))).toBe(false);
    expect(sets.size).toBe(4);

    expect(client.ackAllSets()).toBe(4);
    await initial;
    expect(projection.settledRoots.map(key)).toEqual([systemId, ...historyRoots, blobIdOf(rootBytesOf(context)), blobIdOf(rootBytesOf(userRoot))].map(key));
  });

  it("does not SET a system root the client's checkpoint already holds (the next turn with the same system text)", async () => {
    const client = kvTestClient();
    const state = baseState();
    const systemId = blobIdOf(encoder.encode(systemRootJson("You are Sonnet.")));
    state.rootPromptMessagesJson = [systemId, ...historyRoots];
    const projection = new ConversationProjection({
      base: state,
      blobs: new ClientBlobs(client.kv),
      systemText: "You are Sonnet.",
      historyRoots,
      contextWindow: 200_000,
      mode: agent.AgentMode.ASK,
      turn: { userMessage, requestId: "req-1" },
      onNewRoot: async () => undefined,
    });
    projection.appendInitialMessages([context, userRoot]);
    const sets = setBlobs(client);
    expect(sets.has(key(systemId))).toBe(false);
    expect(sets.size).toBe(3);
    expect(client.ackAllSets()).toBe(3);
    await projection.initialBlobsAcked();
    expect(projection.settledRoots.map(key)[0]).toBe(key(systemId));
  });

  it("emits turn_ended, staged and settled checkpoints only after every blob of the answer is acknowledged", async () => {
    const { client, projection } = await acknowledgedSetup();
    const rootsBefore = [...projection.settledRoots];

    const framesPromise = projection.finalAnswerFrames({
      appended: [assistant],
      turnUsage: create(UsageSchema, { inputTokens: 1200n, outputTokens: 40n, cacheReadTokens: 1000n }),
      contextTokens: 1240n,
      thinkingDurationsMs: [42],
    });
    expect(await settles(framesPromise)).toBe(false);
    const open = client.openRequests();
    expect(open).toHaveLength(4); // assistant root, thinking step, assistant step, turn
    for (const request of open.slice(0, -1)) client.ackSet(request.id);
    expect(await settles(framesPromise)).toBe(false);
    client.ackSet(open.at(-1)!.id);
    const frames = await framesPromise;

    expect(frames.map((f) => f.message.case)).toEqual(["interactionUpdate", "conversationCheckpointUpdate", "conversationCheckpointUpdate"]);
    const turnEnded = frames[0]!.message.value as agent.InteractionUpdate;
    expect(turnEnded.message.case).toBe("turnEnded");
    const usage = turnEnded.message.value as agent.TurnEndedUpdate;
    expect(usage.inputTokens).toBe(1200n);
    expect(usage.outputTokens).toBe(40n);
    expect(usage.cacheReadTokens).toBe(1000n);
    expect(usage.cacheWriteTokens).toBeUndefined();
    expect(usage.reasoningTokens).toBeUndefined();

    const staged = frames[1]!.message.value as agent.ConversationStateStructure;
    const settled = frames[2]!.message.value as agent.ConversationStateStructure;
    const assistantId = blobIdOf(rootBytesOf(assistant));
    expect(staged.rootPromptMessagesJson.map(key)).toEqual(rootsBefore.map(key));
    expect(staged.pendingToolCalls).toEqual([rootJsonOf(assistant)]);
    expect(settled.rootPromptMessagesJson.map(key)).toEqual([...rootsBefore, assistantId].map(key));
    expect(settled.pendingToolCalls).toEqual([]);

    for (const checkpoint of [staged, settled]) {
      expect(checkpoint.tokenDetails).toMatchObject({ usedTokens: 1240, maxTokens: 200_000 });
      expect(checkpoint.todos.map(key)).toEqual([key(todo)]);
      expect(checkpoint.readPaths).toEqual(["/p/a.ts"]);
      expect(checkpoint.mode).toBe(agent.AgentMode.ASK);
      expect(checkpoint.turns).toHaveLength(2);
      expect(key(checkpoint.turns[0]!)).toBe(key(oldTurn));
      // Fields this gateway does not model survive.
      expect(Buffer.from(toBinary(agent.ConversationStateStructureSchema, checkpoint)).includes(Buffer.from(unknownField))).toBe(true);
    }

    // The new turn points at the UserMessage and the answer's steps.
    const sets = setBlobs(client);
    const turn = fromBinary(agent.ConversationTurnStructureSchema, sets.get(key(settled.turns[1]!))!);
    expect(turn.turn.case).toBe("agentConversationTurn");
    const agentTurn = turn.turn.value!;
    expect(agentTurn.requestId).toBe("req-1");
    expect(fromBinary(agent.UserMessageSchema, sets.get(key(agentTurn.userMessage))!)).toMatchObject({ text: "hi", messageId: "m-2" });
    const steps = agentTurn.steps.map((id) => fromBinary(agent.ConversationStepSchema, sets.get(key(id))!).message);
    expect(steps).toMatchObject([
      { case: "thinkingMessage", value: { text: "The user greets me.", durationMs: 42 } },
      { case: "assistantMessage", value: { text: "Hello!" } },
    ]);

    const repeat = projection.repeatSettledFrame();
    expect(repeat?.message.value).toEqual(settled);
  });

  it("a response prepared before its commit: its blobs are SET at once, and the commit sends nothing new and only waits for their ACKs", async () => {
    const { client: prepared, projection, newRoots } = await acknowledgedSetup();
    const rootsBeforePrepare = newRoots.length;
    if (assistant.body.case !== "assistant") throw new Error("fixture");
    projection.prepareResponse(assistant.body.value, [42]);
    const early = prepared.openRequests();
    expect(early).toHaveLength(4); // thinking step, assistant step, turn, assistant root
    expect(newRoots.length - rootsBeforePrepare).toBe(1); // the root is saved in the store once

    const commit = { appended: [assistant], turnUsage: undefined, contextTokens: 1240n, thinkingDurationsMs: [42] };
    const framesPromise = projection.finalAnswerFrames(commit);
    expect(await settles(framesPromise)).toBe(false);
    expect(prepared.openRequests().map((r) => r.id)).toEqual(early.map((r) => r.id));
    expect(prepared.ackAllSets()).toBe(4);
    const frames = await framesPromise;
    expect(newRoots.length - rootsBeforePrepare).toBe(1);

    // The same frames and blobs as a commit that was not prepared.
    const { client: plain, projection: other } = await acknowledgedSetup();
    const plainFrames = other.finalAnswerFrames(commit);
    await settles(plainFrames);
    plain.ackAllSets();
    expect((await plainFrames).map((f) => toBinary(agent.AgentServerMessageSchema, f))).toEqual(frames.map((f) => toBinary(agent.AgentServerMessageSchema, f)));
    expect([...setBlobs(plain).keys()].sort()).toEqual([...setBlobs(prepared).keys()].sort());
  });

  it("a tool-use response prepared early: its steps and turn blob, not a root (the staged checkpoint keeps the roots)", async () => {
    const { client, projection, newRoots } = await acknowledgedSetup();
    const rootsBefore = newRoots.length;
    projection.prepareResponse(
      create(MessageSchema, {
        body: {
          case: "assistant",
          value: {
            content: [
              { part: { case: "text", value: { text: "Reading it." } } },
              { part: { case: "toolCall", value: { callId: "call_1", name: "Read", argumentsJson: "{}" } } },
            ],
          },
        },
      }).body.value as never,
      [],
    );
    expect(client.openRequests()).toHaveLength(2); // assistant step, turn
    expect(newRoots.length).toBe(rootsBefore);
  });

  it("keeps the client's token count when the provider reported no context size", async () => {
    const client = kvTestClient();
    const { projection } = setup(client);
    const frames = projection.finalAnswerFrames({ appended: [assistant], turnUsage: undefined, contextTokens: undefined, thinkingDurationsMs: [] });
    await new Promise((r) => setImmediate(r));
    client.ackAllSets();
    const [turnEnded, , settled] = await frames;
    expect((turnEnded!.message.value as agent.InteractionUpdate).message.value).toEqual(create(agent.TurnEndedUpdateSchema));
    expect((settled!.message.value as agent.ConversationStateStructure).tokenDetails).toMatchObject({ usedTokens: 900, maxTokens: 200_000 });
  });

  it("fails the commit when the client refuses a blob, and sends no checkpoint", async () => {
    const client = kvTestClient();
    const { projection } = setup(client);
    client.ackAllSets();
    const frames = projection.finalAnswerFrames({ appended: [assistant], turnUsage: undefined, contextTokens: undefined, thinkingDurationsMs: [] });
    const [first, ...rest] = client.openRequests();
    client.ackSet(first!.id, "quota exceeded");
    for (const r of rest) client.ackSet(r.id);
    await expect(frames).rejects.toBeInstanceOf(KvError);
    expect(projection.repeatSettledFrame()).toBeUndefined();
  });
});

describe("client blobs barrier", () => {
  it("refuses references to blobs that are neither held by the client nor acknowledged", async () => {
    const client = kvTestClient();
    const blobs = new ClientBlobs(client.kv);
    const held = blobIdOf(encoder.encode("held"));
    blobs.markHeld(held);
    const sent = blobs.put(encoder.encode("sent"));
    expect(blobs.put(encoder.encode("sent"))).toEqual(sent);
    expect(client.openRequests()).toHaveLength(1);

    expect(() => blobs.assertAcked([held])).not.toThrow();
    expect(() => blobs.assertAcked([sent])).toThrow(BlobNotSyncedError);
    await expect(blobs.whenAcked([blobIdOf(encoder.encode("never sent"))])).rejects.toBeInstanceOf(BlobNotSyncedError);
    client.ackAllSets();
    await blobs.whenAcked([held, sent]);
    expect(() => blobs.assertAcked([held, sent])).not.toThrow();
  });

  it("a compaction: summary frames and a settled checkpoint with the summary fields, only after the new roots and summary blobs are acknowledged", async () => {
    const { client, projection } = await acknowledgedSetup();
    const oldRoots = [...projection.settledRoots];
    const summary = user("summary:rev-1", "<conversation_summary>\nthey said hi\n</conversation_summary>", UserOrigin.SUMMARY);

    const framesPromise = projection.compactionFrames({ history: [summary, context, userRoot], summary: "they said hi", contextTokens: 321n });
    expect(await settles(framesPromise)).toBe(false);
    // New: the summary root, the ConversationSummary and the archive (context and user roots are already held).
    const open = client.openRequests();
    expect(open).toHaveLength(3);
    for (const request of open.slice(0, -1)) client.ackSet(request.id);
    expect(await settles(framesPromise)).toBe(false);
    client.ackSet(open.at(-1)!.id);
    const frames = await framesPromise;

    const updates = frames.flatMap((f) => (f.message.case === "interactionUpdate" ? [f.message.value.message.case] : []));
    expect(updates).toEqual(["summary", "summaryCompleted"]);
    const checkpoint = frames.at(-1)!.message.value as agent.ConversationStateStructure;
    const summaryRoot = blobIdOf(rootBytesOf(summary));
    expect(checkpoint.rootPromptMessagesJson.map(key)).toEqual([oldRoots[0]!, summaryRoot, blobIdOf(rootBytesOf(context)), blobIdOf(rootBytesOf(userRoot))].map(key));
    expect(checkpoint.selfSummaryCount).toBe(1);
    expect(checkpoint.tokenDetails?.usedTokens).toBe(321);
    const sets = setBlobs(client);
    expect(fromBinary(agent.ConversationSummarySchema, sets.get(key(checkpoint.summary!))!).summary).toBe("they said hi");
    const archive = fromBinary(agent.ConversationSummaryArchiveSchema, sets.get(key(checkpoint.summaryArchive!))!);
    // The replaced roots: the client's history (the kept context and user roots are not listed).
    expect(archive.summarizedMessages.map(key)).toEqual(historyRoots.map(key));
    expect(key(archive.summaryMessage)).toBe(key(summaryRoot));
    expect(checkpoint.summaryArchives.map(key)).toEqual([key(checkpoint.summaryArchive!)]);

    // Later checkpoints of the run keep the summary fields.
    const later = projection.finalAnswerFrames({ appended: [assistant], turnUsage: undefined, contextTokens: undefined, thinkingDurationsMs: [] });
    client.ackAllSets();
    const settled = (await later).at(-1)!.message.value as agent.ConversationStateStructure;
    expect(settled.selfSummaryCount).toBe(1);
    expect(key(settled.summary!)).toBe(key(checkpoint.summary!));
  });
});
