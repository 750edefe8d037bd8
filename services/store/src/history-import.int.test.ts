import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStatus, StoreErrorKind } from "@byok/contracts";
import { assistantText, describeMessages, startTestStore, userText, type TestStore } from "./store-test-harness.ts";

describe("history.import", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  it("returns the same revision for an identical history and reuses the longest stored prefix", async () => {
    const first = [userText("hello", "u1"), assistantText("hi there")];
    const a = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: first });
    expect(a.error).toBeUndefined();
    expect(a.revisionId).not.toBe("");

    const again = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: first });
    expect(again.revisionId).toBe(a.revisionId);

    const longer = await store.call("importHistory", {
      conversationId: "c1",
      memberId: "m1",
      messages: [...first, userText("and now?", "u2")],
    });
    expect(longer.revisionId).not.toBe(a.revisionId);
    const history = await store.call("getRevisionMessages", { revisionId: longer.revisionId });
    expect(history.revisionChain).toEqual([a.revisionId, longer.revisionId]);
    expect(describeMessages(history.messages)).toEqual(["user:hello", "assistant:hi there", "user:and now?"]);

    // Only the new message was stored.
    const count = await store.sql("SELECT count(*)::int AS n FROM messages");
    expect(count.rows[0].n).toBe(3);
  });

  it("two imports of the same history into a new conversation at once make one revision (the second waits for the first's insert)", async () => {
    const messages = [userText("hello", "u1"), assistantText("hi there")];
    const [a, b] = await Promise.all([
      store.call("importHistory", { conversationId: "c-new", memberId: "m1", messages }),
      store.call("importHistory", { conversationId: "c-new", memberId: "m1", messages }),
    ]);
    expect(a.error).toBeUndefined();
    expect(b.revisionId).toBe(a.revisionId);
    const revisions = await store.sql("SELECT count(*)::int AS n FROM revisions WHERE conversation_id = 'c-new'");
    expect(revisions.rows[0].n).toBe(1);
    // A conversation that exists without revisions (an empty import created it) still looks for one.
    await store.call("importHistory", { conversationId: "c-empty", memberId: "m1", messages: [] });
    const first = await store.call("importHistory", { conversationId: "c-empty", memberId: "m1", messages });
    const again = await store.call("importHistory", { conversationId: "c-empty", memberId: "m1", messages });
    expect(again.revisionId).toBe(first.revisionId);
  });

  it("recognises a history that a run committed, however it was split into revisions", async () => {
    const begun = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", initialMessages: [userText("question", "u1")] });
    const appended = await store.call("appendMessages", {
      runId: "r1",
      expectedHeadRevisionId: begun.run!.startRevisionId,
      messages: [assistantText("answer")],
      providerCallIndex: 1,
    });
    await store.call("finishRun", { runId: "r1", status: RunStatus.COMPLETED });

    // The client sends the whole history back at the next turn.
    const imported = await store.call("importHistory", {
      conversationId: "c1",
      memberId: "m1",
      messages: [userText("question", "u1"), assistantText("answer")],
    });
    expect(imported.revisionId).toBe(appended.revisionId);

    // A rolled-back client (only the question) gets the run's start revision.
    const rolledBack = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("question", "u1")] });
    expect(rolledBack.revisionId).toBe(begun.run!.startRevisionId);
  });

  it("treats a different message (even only its client id) as a different history", async () => {
    const a = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("same", "id-1")] });
    const b = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("same", "id-2")] });
    expect(b.revisionId).not.toBe(a.revisionId);
  });

  it("returns an empty revision id for an empty history and still creates the conversation", async () => {
    const empty = await store.call("importHistory", { conversationId: "c-empty", memberId: "m1", messages: [] });
    expect(empty.error).toBeUndefined();
    expect(empty.revisionId).toBe("");
    const conversation = await store.call("getConversation", { conversationId: "c-empty" });
    expect(conversation.memberId).toBe("m1");
    expect(conversation.headRevisionId).toBe("");
  });

  it("with a base revision, imports only what is new: the same revisions as a whole-history import", async () => {
    const first = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("one"), assistantText("two")] });
    const whole = [userText("one"), assistantText("two"), userText("three"), assistantText("four")];
    const continued = await store.call("importHistory", { conversationId: "c1", memberId: "m1", baseRevisionId: first.revisionId, messages: whole.slice(2) });
    expect(continued.error).toBeUndefined();
    expect(describeMessages((await store.call("getRevisionMessages", { revisionId: continued.revisionId })).messages)).toEqual(["user:one", "assistant:two", "user:three", "assistant:four"]);
    // The whole history finds the revision the continuation made, and the continuation finds it again.
    expect((await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: whole })).revisionId).toBe(continued.revisionId);
    expect((await store.call("importHistory", { conversationId: "c1", memberId: "m1", baseRevisionId: first.revisionId, messages: whole.slice(2, 3) })).revisionId).not.toBe(continued.revisionId);
    expect((await store.call("importHistory", { conversationId: "c1", memberId: "m1", baseRevisionId: first.revisionId, messages: whole.slice(2) })).revisionId).toBe(continued.revisionId);
    expect((await store.call("importHistory", { conversationId: "c1", memberId: "m1", baseRevisionId: first.revisionId, messages: [] })).revisionId).toBe(first.revisionId);
    const revisions = await store.sql("SELECT count(*)::int AS n FROM revisions");
    expect(revisions.rows[0].n).toBe(3);
    // A base of another conversation (or none at all) is refused.
    await store.call("importHistory", { conversationId: "c2", memberId: "m1", messages: [userText("other")] });
    const foreign = await store.call("importHistory", { conversationId: "c2", memberId: "m1", baseRevisionId: first.revisionId, messages: [userText("x")] });
    expect(foreign.error?.kind).toBe(StoreErrorKind.NOT_FOUND);
    const stolen = await store.call("importHistory", { conversationId: "c1", memberId: "mallory", baseRevisionId: first.revisionId, messages: [] });
    expect(stolen.error?.kind).toBe(StoreErrorKind.FORBIDDEN);
  });

  it("refuses to import into another member's conversation", async () => {
    await store.call("importHistory", { conversationId: "c1", memberId: "alice", messages: [userText("mine")] });
    const stolen = await store.call("importHistory", { conversationId: "c1", memberId: "mallory", messages: [userText("mine")] });
    expect(stolen.error?.kind).toBe(StoreErrorKind.FORBIDDEN);
    expect(stolen.revisionId).toBe("");
  });

  it("stores text containing NUL characters (as U+FFFD) and still recognises the same history", async () => {
    const messages = [userText("a\u0000b")];
    const a = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages });
    expect(a.error).toBeUndefined();
    const b = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages });
    expect(b.revisionId).toBe(a.revisionId);
    const history = await store.call("getRevisionMessages", { revisionId: a.revisionId });
    expect(describeMessages(history.messages)).toEqual(["user:a\uFFFDb"]);
  });

  it("keeps every field of a message through storage (images, reasoning, tool calls, replay)", async () => {
    const image = new Uint8Array([0, 1, 2, 250, 255]);
    const messages = [
      {
        body: {
          case: "user" as const,
          value: { clientId: "u1", origin: 2, content: [{ part: { case: "image" as const, value: { mimeType: "image/png", data: image } } }] },
        },
      },
      {
        body: {
          case: "assistant" as const,
          value: {
            content: [
              { part: { case: "reasoning" as const, value: { text: "think" } } },
              { part: { case: "toolCall" as const, value: { callId: "call\n1", name: "read", argumentsJson: '{"path":"a"}' } } },
            ],
            replay: { providerKind: "anthropic", routeId: "claude", data: new Uint8Array([9, 8, 7]) },
          },
        },
      },
      { body: { case: "toolResult" as const, value: { callId: "call\n1", toolName: "read", content: "{}", isError: true } } },
    ];
    const imported = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages });
    const history = await store.call("getRevisionMessages", { revisionId: imported.revisionId });
    expect(history.messages).toHaveLength(3);
    const [user, assistant, result] = history.messages;
    expect(user?.body.case === "user" && user.body.value.content[0]?.part.case === "image" && Array.from(user.body.value.content[0].part.value.data)).toEqual(
      Array.from(image),
    );
    expect(assistant?.body.case === "assistant" && assistant.body.value.replay?.providerKind).toBe("anthropic");
    expect(assistant?.body.case === "assistant" && Array.from(assistant.body.value.replay?.data ?? [])).toEqual([9, 8, 7]);
    expect(result?.body.case === "toolResult" && result.body.value).toMatchObject({ callId: "call\n1", toolName: "read", isError: true });
    expect(history.messageIds).toHaveLength(3);
  });
});
