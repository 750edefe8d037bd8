import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { CommitCause, FailureKind, MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { agent, aiserver } from "@byok/cursor-protocol";
import { waitFor } from "@byok/test-support/infra";
import { blobIdOf, blobKey } from "../checkpoint/blob-id.ts";
import { rootBytesOf } from "../root-codec/root-json.ts";
import { FakeCursorClient, startSessionWorld, type SessionWorld } from "./test-harness.ts";

let world: SessionWorld;

beforeAll(async () => {
  world = await startSessionWorld();
});

afterAll(async () => {
  await world?.close();
});

const env = { osVersion: "linux 6.8", shell: "/bin/bash", workspacePaths: ["/home/dev/shop"], timeZone: "UTC" };

function userTurn(conversationId: string, state: MessageInitShape<typeof agent.ConversationStateStructureSchema>, text: string, messageId: string) {
  return {
    conversationId,
    conversationState: state,
    requestedModel: { modelId: "sonnet-test", parameters: [{ id: "reasoning", value: "high" }] },
    action: {
      action: {
        case: "userMessageAction" as const,
        value: { userMessage: { text, messageId, mode: agent.AgentMode.AGENT }, requestContext: { env } },
      },
    },
  };
}

const answer = create(MessageSchema, {
  body: {
    case: "assistant",
    value: {
      content: [
        { part: { case: "reasoning", value: { text: "Greeting." } } },
        { part: { case: "text", value: { text: "Hello world" } } },
      ],
      replay: { providerKind: "anthropic", routeId: "sonnet-test", data: new Uint8Array([9, 8, 7]) },
    },
  },
});

describe("run session", () => {
  it("runs a turn end to end and recognises its history on the next turn", async () => {
    const client = new FakeCursorClient();
    const conversationId = randomUUID();

    // ---- turn 1: a new conversation ----
    const r1 = world.open(client, userTurn(conversationId, {}, "hello", "m1"));
    const run1 = await world.takeRun(r1);
    expect(run1).toMatchObject({ runId: r1, conversationId, memberId: "member-a", baseRevisionId: "" });
    expect(run1.model).toMatchObject({ modelId: "sonnet-test", effort: "high", contextWindow: 200000 });
    expect(run1.prompt?.mode).toBe("agent");
    expect(run1.prompt?.systemText).toContain("You are Sonnet Test");
    expect(run1.prompt?.systemText).not.toContain("{{");
    expect(run1.action.case).toBe("start");
    const initial = run1.action.case === "start" ? run1.action.value.initialMessages : [];
    expect(initial.map((m) => m.body.value && "origin" in m.body.value && m.body.value.origin)).toEqual([UserOrigin.CONTEXT, UserOrigin.USER]);
    expect(initial[1]!.body.value).toMatchObject({ clientId: "m1", content: [{ part: { case: "text", value: { text: "<user_query>\nhello\n</user_query>" } } }] });
    // The blobs of the first checkpoint wait for the owner's first event: nothing competes with the run's start.
    expect(client.frames.filter((f) => f.message.case === "kvServerMessage")).toHaveLength(0);
    expect(client.uiFrames()).toEqual([]);

    // The run owner's part, against the real store.
    const begun = await world.storeCall("beginRun", { runId: r1, conversationId, memberId: "member-a", baseRevisionId: "", initialMessages: initial, modelId: "sonnet-test" });
    expect(begun.error).toBeUndefined();
    world.event(r1, 1, { case: "thinkingStart", value: { index: 0 } });
    await waitFor(() => client.frames.filter((f) => f.message.case === "kvServerMessage").length === 4, "the first checkpoint's four blobs SET");
    world.event(r1, 2, { case: "thinkingDelta", value: { index: 0, text: "Greeting." } });
    world.event(r1, 3, { case: "thinkingEnd", value: { index: 0 } });
    world.event(r1, 4, { case: "textStart", value: { index: 1 } });
    world.event(r1, 5, { case: "textDelta", value: { index: 1, text: "Hello " } });
    world.event(r1, 6, { case: "textDelta", value: { index: 1, text: "world" } });
    world.event(r1, 7, { case: "textEnd", value: { index: 1 } });
    world.event(r1, 8, { case: "usage", value: { inputTokens: 50n, outputTokens: 5n } });
    await waitFor(() => client.text() === "Hello world", "streamed text");

    const appended = await world.storeCall("appendMessages", { runId: r1, expectedHeadRevisionId: begun.run!.headRevisionId, messages: [answer], providerCallIndex: 1 });
    expect(appended.error).toBeUndefined();
    const committed = {
      case: "stateCommitted" as const,
      value: { revisionId: appended.revisionId, cause: CommitCause.FINAL_ANSWER, appended: [answer], turnUsage: { inputTokens: 50n, outputTokens: 5n }, contextTokens: 55n },
    };
    const ack = await world.state(r1, committed);
    expect(ack).toMatchObject({ ok: true });
    // The barrier: when the owner hears back, the client already has the checkpoints.
    expect(client.uiFrames()).toEqual(["thinkingDelta", "thinkingCompleted", "textDelta", "textDelta", "tokenDelta", "turnEnded", "staged", "settled"]);
    const lastKv = client.frames.findLastIndex((f) => f.message.case === "kvServerMessage");
    const turnEnded = client.frames.findIndex((f) => f.message.case === "interactionUpdate" && f.message.value.message.case === "turnEnded");
    expect(lastKv).toBeLessThan(turnEnded);

    // A new owner re-sending the same commit changes nothing.
    const framesBefore = client.frames.length;
    expect(await world.state(r1, committed)).toMatchObject({ ok: true });
    expect(client.frames).toHaveLength(framesBefore);

    expect(await world.state(r1, { case: "terminal", value: { outcome: { case: "completed", value: {} } } })).toMatchObject({ ok: true });
    expect(client.outcome).toEqual({ kind: "ok" });
    expect(client.uiFrames().slice(-3)).toEqual(["staged", "settled", "settled"]);
    const [staged, settled, again] = client.checkpoints();
    expect(again).toEqual(settled);
    expect(staged!.rootPromptMessagesJson).toHaveLength(3);
    expect(settled!.rootPromptMessagesJson).toHaveLength(4);
    expect(blobKey(settled!.rootPromptMessagesJson[3]!)).toBe(blobKey(blobIdOf(rootBytesOf(answer))));
    expect(settled!.tokenDetails).toMatchObject({ usedTokens: 55, maxTokens: 200000 });
    // Every blob the checkpoint references is in the client's store.
    for (const id of [...settled!.rootPromptMessagesJson, ...settled!.turns]) expect(client.blobs.has(blobKey(id))).toBe(true);

    // ---- turn 2: same environment, the client sends the settled checkpoint ----
    // The adapter knows those roots are the answer's revision: no blob is read back, nothing imported.
    const storeCalls: string[] = [];
    const watch = world.nc.subscribe(world.names.store(">"), { callback: (_err, msg) => void storeCalls.push(msg.subject.split(".").slice(-2).join(".")) });
    await world.nc.flush();
    const r2 = world.open(client, userTurn(conversationId, settled!, "and now?", "m2"));
    const run2 = await world.takeRun(r2);
    watch.unsubscribe();
    expect(storeCalls).toContain("history.import");
    expect(storeCalls.filter((op) => op === "blob.get" || op === "blob.put_many")).toEqual([]);
    // The store recognised the client's roots as exactly the history it holds.
    expect(run2.baseRevisionId).toBe(appended.revisionId);
    expect(run2.action.case).toBe("start");
    const initial2 = run2.action.case === "start" ? run2.action.value.initialMessages : [];
    expect(initial2.map((m) => (m.body.case === "user" ? m.body.value.clientId : ""))).toEqual(["m2"]);
    // The roots this gateway wrote were saved in the store: no KV GET was needed.
    expect(client.frames.some((f) => f.message.case === "kvServerMessage" && f.message.value.message.case === "getBlobArgs")).toBe(false);

    expect(await world.state(r2, { case: "terminal", value: { outcome: { case: "failed", value: { kind: FailureKind.PROVIDER, message: "upstream 529 overloaded", retryable: true } } } })).toMatchObject({ ok: true });
    expect(client.outcome).toMatchObject({ kind: "error", code: "unavailable", message: "upstream 529 overloaded" });
    const details = client.outcome?.kind === "error" ? client.outcome.details : undefined;
    expect(details?.error).toBe(aiserver.ErrorDetails_Error.PROVIDER_ERROR);
    expect(details?.details).toMatchObject({ title: "Provider error", detail: "upstream 529 overloaded", isRetryable: true });
    // No turn_ended and no checkpoint on failure.
    expect(client.uiFrames()).toEqual([]);
  });

  it("imports roots only the client holds, fetching them over KV and saving them in the store", async () => {
    const client = new FakeCursorClient();
    const conversationId = randomUUID();
    const encoder = new TextEncoder();
    const roots = [
      '{"role":"system","content":"You are Cursor\'s own agent."}',
      '{"role":"user","id":"request-context:x","content":"<user_info>\\nShell: /bin/bash\\n</user_info>"}',
      '{"role":"user","id":"u-1","content":[{"type":"text","text":"<user_query>\\nlist files\\n</user_query>"}]}',
      '{"role":"assistant","id":"1","content":[{"type":"reasoning","text":"ls","signature":"sig","providerOptions":{"cursor":{"modelName":"x"}}},{"type":"text","text":"a.ts b.ts"}]}',
    ].map((json) => client.store(encoder.encode(json)));
    const prefetchedRoot = encoder.encode('{"role":"user","id":"u-2","content":"thanks"}');
    roots.push(blobIdOf(prefetchedRoot));

    const r = world.open(client, {
      ...userTurn(conversationId, { rootPromptMessagesJson: roots }, "next", "m3"),
      preFetchedBlobs: [{ id: blobIdOf(prefetchedRoot), value: prefetchedRoot }],
    });
    const run = await world.takeRun(r);
    const gets = client.frames.flatMap((f) => (f.message.case === "kvServerMessage" && f.message.value.message.case === "getBlobArgs" ? [f.message.value] : []));
    // Four roots came over KV GET (ids from 0); the pre-fetched one did not.
    expect(gets.map((g) => g.id)).toEqual([0, 1, 2, 3]);

    const history = await world.storeCall("getRevisionMessages", { revisionId: run.baseRevisionId });
    const bodies = history.messages.map((m: Message) => m.body);
    expect(bodies.map((b) => b.case)).toEqual(["user", "user", "assistant", "user"]);
    expect(bodies[0]!.value).toMatchObject({ origin: UserOrigin.CONTEXT });
    expect(bodies[3]!.value).toMatchObject({ clientId: "u-2", content: [{ part: { case: "text", value: { text: "thanks" } } }] });

    const stored = await world.storeCall("getBlobs", { ids: roots });
    expect(stored.blobs).toHaveLength(roots.length);

    // The client's system root is replaced by ours; its history roots stay byte for byte.
    await world.state(r, { case: "stateCommitted", value: { revisionId: "rev-x", cause: CommitCause.FINAL_ANSWER, appended: [answer] } });
    const settled = client.checkpoints().at(-1)!;
    expect(blobKey(settled.rootPromptMessagesJson[0]!)).not.toBe(blobKey(roots[0]!));
    expect(settled.rootPromptMessagesJson.slice(1, 5).map(blobKey)).toEqual(roots.slice(1).map(blobKey));
    await world.state(r, { case: "terminal", value: { outcome: { case: "completed", value: {} } } });
    expect(client.outcome).toEqual({ kind: "ok" });
  });

  it("relays a cancel to the run owner and ends with canceled when it confirms", async () => {
    const client = new FakeCursorClient();
    const r = world.open(client, userTurn(randomUUID(), {}, "long task", "m1"));
    await world.takeRun(r);
    world.event(r, 1, { case: "thinkingStart", value: { index: 0 } });
    world.event(r, 2, { case: "thinkingDelta", value: { index: 0, text: "..." } });
    await waitFor(() => client.uiFrames().includes("thinkingDelta"), "thinking");

    client.session!.deliver(create(agent.AgentClientMessageSchema, { message: { case: "conversationAction", value: { action: { case: "cancelAction", value: { reason: "stop" } } } } }));
    const command = await waitFor(() => world.lastCommand(r), "cancel command");
    expect(command).toMatchObject({ commandId: `${r}:cancel`, command: { case: "cancel", value: { reason: "stop" } } });
    expect(client.outcome).toBeUndefined();

    expect(await world.state(r, { case: "terminal", value: { outcome: { case: "cancelled", value: { reason: "cancelled by the client" } } } })).toMatchObject({ ok: true });
    expect(client.outcome).toEqual({ kind: "error", code: "canceled", message: "cancelled by the client" });
    // The open thinking block was closed; nothing else was sent.
    expect(client.uiFrames()).toEqual(["thinkingDelta", "thinkingCompleted"]);
  });

  it("ends a cancelled run with canceled even when the owner never answers", async () => {
    const client = new FakeCursorClient();
    const r = world.open(client, userTurn(randomUUID(), {}, "x", "m1"));
    await world.takeRun(r);
    client.session!.clientDisconnected();
    const command = await waitFor(() => world.lastCommand(r), "cancel command");
    expect(command?.command.case).toBe("cancel");
    await waitFor(() => client.outcome, "stream end", 5_000);
    expect(client.outcome).toMatchObject({ kind: "error", code: "canceled" });
    // The adapter stopped serving the run's state subject: a liveness probe finds nobody either.
    await expect(world.state(r, { case: "terminal", value: { outcome: { case: "completed", value: {} } } })).rejects.toMatchObject({ kind: "no_responders" });
    await expect(world.state(r, { case: "probe", value: {} })).rejects.toMatchObject({ kind: "no_responders" });
  });

  it("fails the run when the client does not acknowledge the answer's blobs", async () => {
    const client = new FakeCursorClient();
    const r = world.open(client, userTurn(randomUUID(), {}, "x", "m1"));
    await world.takeRun(r);
    client.setMode = "refuse";
    const ack = await world.state(r, { case: "stateCommitted", value: { revisionId: "rev-1", cause: CommitCause.FINAL_ANSWER, appended: [answer] } });
    expect(ack.ok).toBe(false);
    expect(ack.error).toContain("no space left");
    expect(client.outcome).toMatchObject({ kind: "error", code: "unavailable" });
    expect(client.uiFrames()).toEqual([]);
    // The owner is told to stop: the client side closed with an error (not a user cancel).
    expect(await waitFor(() => world.lastCommand(r), "client closed command")).toMatchObject({
      commandId: `${r}:closed`,
      command: { case: "clientClosed", value: { error: expect.stringContaining("no space left"), failureKind: FailureKind.CLIENT } },
    });
  });

  it("holds the StateAck until the client acknowledged every blob", async () => {
    const client = new FakeCursorClient();
    const r = world.open(client, userTurn(randomUUID(), {}, "x", "m1"));
    await world.takeRun(r);
    client.setMode = "hold";
    let acked = false;
    const ack = world.state(r, { case: "stateCommitted", value: { revisionId: "rev-1", cause: CommitCause.FINAL_ANSWER, appended: [answer] } }).then((a) => {
      acked = true;
      return a;
    });
    await waitFor(() => client.frames.filter((f) => f.message.case === "kvServerMessage").length === 8, "answer blob SETs");
    // A liveness probe is answered at once, not behind the commit being projected. Its answer comes
    // over the same connection as the StateAck would: had the adapter acknowledged the commit without
    // waiting for the blobs, that ack would be here by now.
    expect(await world.state(r, { case: "probe", value: {} })).toMatchObject({ ok: true });
    expect(acked).toBe(false);
    expect(client.uiFrames()).toEqual([]);
    client.releaseHeldSets();
    expect(await ack).toMatchObject({ ok: true });
    expect(client.uiFrames()).toEqual(["turnEnded", "staged", "settled"]);
  });

  it("rejects an unknown model before anything is published", async () => {
    const client = new FakeCursorClient();
    world.open(client, { ...userTurn(randomUUID(), {}, "x", "m1"), requestedModel: { modelId: "gpt-unknown" } });
    await waitFor(() => client.outcome, "stream end");
    expect(client.outcome).toMatchObject({ kind: "error", code: "not_found" });
    const details = client.outcome?.kind === "error" ? client.outcome.details : undefined;
    expect(details?.error).toBe(aiserver.ErrorDetails_Error.BAD_MODEL_NAME);
    expect(client.frames).toEqual([]);
  });

  it("rejects a request id that cannot be a run id", async () => {
    const client = new FakeCursorClient();
    world.open(client, userTurn(randomUUID(), {}, "x", "m1"), { requestId: "bad.id" });
    await waitFor(() => client.outcome, "stream end");
    expect(client.outcome).toMatchObject({ kind: "error", code: "invalid_argument" });
  });

  it("rejects history roots that are not JSON as a protocol error", async () => {
    const client = new FakeCursorClient();
    const broken = client.store(new TextEncoder().encode("not json"));
    world.open(client, userTurn(randomUUID(), { rootPromptMessagesJson: [broken] }, "x", "m1"));
    await waitFor(() => client.outcome, "stream end");
    expect(client.outcome).toMatchObject({ kind: "error", code: "invalid_argument" });
    expect(client.outcome?.kind === "error" && client.outcome.message).toMatch(/^protocol error: root 0/);
  });
});

describe("resuming from a checkpoint", () => {
  const encoder = new TextEncoder();

  function resumeRequest(conversationId: string, state: MessageInitShape<typeof agent.ConversationStateStructureSchema>) {
    return {
      conversationId,
      conversationState: state,
      requestedModel: { modelId: "sonnet-test" },
      action: { action: { case: "resumeAction" as const, value: { requestContext: { env } } } },
    };
  }

  it("re-creates a staged tool round from the pending assistant", async () => {
    const client = new FakeCursorClient();
    const roots = [client.store(encoder.encode('{"role":"user","id":"u1","content":[{"type":"text","text":"read a"}]}'))];
    const pending =
      '{"role":"assistant","id":"1","content":[{"type":"text","text":"Reading."},{"type":"tool-call","toolCallId":"call_1\\nfc_1","toolName":"Read","args":{"path":"a"}}],' +
      '"providerOptions":{"cursor":{"pendingToolCallStartedAtMs":1760000000000,"pendingToolExecutionContracts":{}}}}';
    const r = world.open(client, resumeRequest(randomUUID(), { rootPromptMessagesJson: roots, pendingToolCalls: [pending], mode: agent.AgentMode.PLAN }));
    const run = await world.takeRun(r);
    expect(run.prompt?.mode).toBe("plan");
    expect(run.action.case).toBe("resume");
    const resume = run.action.case === "resume" ? run.action.value : undefined;
    expect(resume?.pendingStartedAtMs).toBe(1760000000000n);
    expect(resume?.pendingAssistant?.content.map((p) => p.part.case)).toEqual(["text", "toolCall"]);
    expect(resume?.pendingAssistant?.content[1]!.part.value).toMatchObject({ callId: "call_1\nfc_1", name: "Read", argumentsJson: '{"path":"a"}' });
    const history = await world.storeCall("getRevisionMessages", { revisionId: run.baseRevisionId });
    expect(history.messages).toHaveLength(1);
    await world.state(r, { case: "terminal", value: { outcome: { case: "cancelled", value: { reason: "test over" } } } });
    expect(client.outcome).toMatchObject({ kind: "error", code: "canceled" });
  });

  it("treats a staged final answer as history", async () => {
    const client = new FakeCursorClient();
    const roots = [client.store(encoder.encode('{"role":"user","id":"u1","content":[{"type":"text","text":"hi"}]}'))];
    const pending = '{"role":"assistant","id":"1","content":[{"type":"text","text":"Hello."}]}';
    const r = world.open(client, resumeRequest(randomUUID(), { rootPromptMessagesJson: roots, pendingToolCalls: [pending] }));
    const run = await world.takeRun(r);
    expect(run.action).toMatchObject({ case: "resume", value: { pendingStartedAtMs: 0n } });
    expect(run.action.case === "resume" && run.action.value.pendingAssistant).toBeUndefined();
    const history = await world.storeCall("getRevisionMessages", { revisionId: run.baseRevisionId });
    expect(history.messages.map((m: Message) => m.body.case)).toEqual(["user", "assistant"]);

    await world.state(r, { case: "terminal", value: { outcome: { case: "completed", value: {} } } });
    expect(client.outcome).toEqual({ kind: "ok" });
  });

  it("keeps a staged final answer in the roots when the member sends the next message", async () => {
    const client = new FakeCursorClient();
    const userRoot = client.store(encoder.encode('{"role":"user","id":"u1","content":[{"type":"text","text":"hi"}]}'));
    const pending = '{"role":"assistant","id":"1","content":[{"type":"text","text":"Hello."}]}';
    const r = world.open(client, userTurn(randomUUID(), { rootPromptMessagesJson: [userRoot], pendingToolCalls: [pending] }, "next", "m9"));
    const run = await world.takeRun(r);
    const history = await world.storeCall("getRevisionMessages", { revisionId: run.baseRevisionId });
    expect(history.messages.map((m: Message) => m.body.case)).toEqual(["user", "assistant"]);
    const initial = run.action.case === "start" ? run.action.value.initialMessages : [];
    expect(initial.map((m) => m.body.case)).toEqual(["user", "user"]);

    await world.state(r, { case: "stateCommitted", value: { revisionId: "rev-9", cause: CommitCause.FINAL_ANSWER, appended: [answer] } });
    const settled = client.checkpoints().at(-1)!;
    // system, client's user root, the folded answer, context, user, new answer
    expect(settled.rootPromptMessagesJson).toHaveLength(6);
    expect(blobKey(settled.rootPromptMessagesJson[2]!)).toBe(blobKey(blobIdOf(encoder.encode(pending))));
    expect(settled.pendingToolCalls).toEqual([]);
    await world.state(r, { case: "terminal", value: { outcome: { case: "completed", value: {} } } });
    expect(client.outcome).toEqual({ kind: "ok" });
  });

  it("publishes a new, empty conversation without a store round trip: run.begin creates it", async () => {
    const client = new FakeCursorClient();
    const conversationId = randomUUID();
    const r = world.open(client, userTurn(conversationId, {}, "hello", "m1"));
    const run = await world.takeRun(r);
    expect(run).toMatchObject({ conversationId, memberId: "member-a", baseRevisionId: "" });
    // Nothing was imported: the conversation does not exist before the owner's run.begin.
    const before = await world.storeCall("getConversation", { conversationId });
    expect(before.error).toBeDefined();
    const initial = run.action.case === "start" ? run.action.value.initialMessages : [];
    const begun = await world.storeCall("beginRun", { runId: r, conversationId, memberId: "member-a", baseRevisionId: "", initialMessages: initial, modelId: "sonnet-test" });
    expect(begun.error).toBeUndefined();
    expect(await world.storeCall("getConversation", { conversationId })).toMatchObject({ memberId: "member-a" });
    await world.state(r, { case: "terminal", value: { outcome: { case: "cancelled", value: { reason: "test over" } } } });
    expect(client.outcome).toMatchObject({ kind: "error", code: "canceled" });
  });

  it("ends another member's conversation as permission_denied when run.begin refused it (no import before the publish)", async () => {
    const conversationId = randomUUID();
    const theirs = await world.storeCall("importHistory", { conversationId, memberId: "member-b", messages: [] });
    expect(theirs.error).toBeUndefined();
    const client = new FakeCursorClient();
    const r = world.open(client, userTurn(conversationId, {}, "mine now", "m1"));
    await world.takeRun(r);
    const refused = await world.storeCall("beginRun", { runId: r, conversationId, memberId: "member-a", baseRevisionId: "", initialMessages: [], modelId: "sonnet-test" });
    expect(refused.error).toBeDefined();
    // What the run owner sends for a refused run.begin: a store failure.
    await world.state(r, { case: "terminal", value: { outcome: { case: "failed", value: { kind: FailureKind.STORE, message: refused.error!.message } } } });
    await waitFor(() => client.outcome !== undefined, "the stream's end");
    expect(client.outcome).toMatchObject({ kind: "error", code: "permission_denied" });
  });

  it("keeps a store failure of a new conversation that is the member's as it is", async () => {
    const client = new FakeCursorClient();
    const conversationId = randomUUID();
    const r = world.open(client, userTurn(conversationId, {}, "hello", "m1"));
    await world.takeRun(r);
    await world.state(r, { case: "terminal", value: { outcome: { case: "failed", value: { kind: FailureKind.STORE, message: "database on fire" } } } });
    await waitFor(() => client.outcome !== undefined, "the stream's end");
    expect(client.outcome).toMatchObject({ kind: "error", code: "internal", message: "database on fire" });
  });
});
