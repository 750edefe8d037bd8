import { create } from "@bufbuild/protobuf";
import { MessageSchema, type Message } from "@byok/contracts";
import type { StoreClient } from "@byok/store-client";
import { describe, expect, it } from "vitest";
import { RunHistory } from "./run-history.ts";

const noStore = {} as StoreClient;

function text(role: "user" | "assistant", value: string): Message {
  return create(MessageSchema, { body: { case: role, value: { content: [{ part: { case: "text", value: { text: value } } }] } } });
}

function loaded(): RunHistory {
  const history = new RunHistory(noStore, "rev-1");
  history.use("rev-1", { messages: [text("user", "hi")], messageIds: ["m1"], compaction: undefined, anchor: undefined });
  return history;
}

describe("RunHistory.appended", () => {
  it("holds the whole history of the new head when the store returned the appended messages' ids, with the call's measurement as its anchor", () => {
    const history = loaded();
    history.anchor = { messageCount: 1, inputTokens: 42 };
    const answer = text("assistant", "hello");
    history.appended("rev-2", [answer], ["m2"]);
    expect(history.head).toBe("rev-2");
    expect(history.known?.revisionId).toBe("rev-2");
    expect(history.known?.history.messages).toEqual([text("user", "hi"), answer]);
    expect(history.known?.history.messageIds).toEqual(["m1", "m2"]);
    expect(history.known?.history.anchor).toMatchObject({ revisionId: "rev-1", messageCount: 1, inputTokens: 42n });
  });

  it("only moves the head without the ids (a repeat, or a message the store changed): the known history stays the one read", () => {
    const history = loaded();
    history.appended("rev-2", [text("assistant", "hello")], []);
    expect(history.head).toBe("rev-2");
    expect(history.known?.revisionId).toBe("rev-1");
    expect(history.known?.history.messages).toHaveLength(1);
  });
});
