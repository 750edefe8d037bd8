import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { MessageSchema, type Message } from "@byok/contracts";
import { resultOrder, RoundLedger, roundMessagesFromHistory } from "./round-projection.ts";

const msg = (body: MessageInitShape<typeof MessageSchema>["body"]): Message => create(MessageSchema, { body });
const call = (id: string, text?: string) =>
  msg({
    case: "assistant",
    value: {
      content: [
        ...(text === undefined ? [] : [{ part: { case: "text" as const, value: { text } } }]),
        { part: { case: "toolCall" as const, value: { callId: id, name: "Read", argumentsJson: "{}" } } },
      ],
    },
  });
const result = (id: string) => msg({ case: "toolResult", value: { callId: id, toolName: "Read", content: `result ${id}` } });
const user = msg({ case: "user", value: { clientId: "u", content: [{ part: { case: "text", value: { text: "hi" } } }] } });

describe("round ledger", () => {
  it("gives the round's pairs in commit order once every call has one", () => {
    const ledger = new RoundLedger();
    ledger.record("r1", [call("b", "Looking."), result("b")]);
    expect(ledger.messagesOf("r1", ["a", "b"])).toBeUndefined();
    ledger.record("r1", [call("a"), result("a")]);
    const messages = ledger.messagesOf("r1", ["a", "b"]);
    expect(messages && resultOrder(messages)).toEqual(["b", "a"]);
    expect(ledger.messagesOf("r2", ["a"])).toBeUndefined();
  });

  it("reads a round back from the end of a revision's history", () => {
    const older = [user, call("x"), result("x"), msg({ case: "assistant", value: { content: [{ part: { case: "text", value: { text: "ok" } } }] } }), user];
    const round = [call("c", "Both."), result("c"), call("a"), result("a")];
    expect(roundMessagesFromHistory([...older, ...round], ["a", "c"])).toEqual(round);
    expect(roundMessagesFromHistory(older, ["a", "c"])).toEqual([]);
  });
});
