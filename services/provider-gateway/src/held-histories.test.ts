import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { historySize, MessageSchema, ModelRequestSchema, type Message } from "@byok/contracts";
import { estimateMessages } from "./accounting/estimate-tokens.ts";
import { HeldHistories } from "./held-histories.ts";

const text = (t: string): Message => create(MessageSchema, { body: { case: "user", value: { content: [{ part: { case: "text", value: { text: t } } }] } } });
const texts = (messages: readonly Message[]) => messages.map((m) => (m.body.case === "user" && m.body.value.content[0]?.part.case === "text" ? m.body.value.content[0].part.value.text : "?"));

function request(conversationId: string, messages: Message[], historyRevisionId: string, base?: { revisionId: string; messageCount: number }) {
  return create(ModelRequestSchema, { conversationId, messages, historyRevisionId, ...(base === undefined ? {} : { historyBase: base }) });
}

describe("HeldHistories", () => {
  it("puts a request's history together from the conversation's last request and what it carries", () => {
    const held = new HeldHistories();
    const first = held.resolve(request("c", [text("a"), text("b")], "r2"));
    expect(first.kind === "whole" && texts(first.messages)).toEqual(["a", "b"]);
    const next = held.resolve(request("c", [text("c"), text("d")], "r4", { revisionId: "r2", messageCount: 2 }));
    expect(next.kind === "whole" && texts(next.messages)).toEqual(["a", "b", "c", "d"]);
    const third = held.resolve(request("c", [text("e")], "r5", { revisionId: "r4", messageCount: 4 }));
    expect(third.kind === "whole" && texts(third.messages)).toEqual(["a", "b", "c", "d", "e"]);
    // The admission's estimate of the whole history, kept per held history instead of walked again.
    expect(third.kind === "whole" && third.estimate).toEqual(estimateMessages(third.kind === "whole" ? third.messages : []));
    expect(held.size).toBe(historySize(third.kind === "whole" ? third.messages : []));
  });

  it("answers base_unknown for a base it does not hold: another revision, another count, another conversation, nothing held", () => {
    const held = new HeldHistories();
    held.resolve(request("c", [text("a"), text("b")], "r2"));
    expect(held.resolve(request("c", [text("c")], "r3", { revisionId: "r1", messageCount: 2 })).kind).toBe("base_unknown");
    expect(held.resolve(request("c", [text("c")], "r3", { revisionId: "r2", messageCount: 3 })).kind).toBe("base_unknown");
    expect(held.resolve(request("other", [text("c")], "r3", { revisionId: "r2", messageCount: 2 })).kind).toBe("base_unknown");
    expect(new HeldHistories().resolve(request("c", [text("c")], "r3", { revisionId: "r2", messageCount: 2 })).kind).toBe("base_unknown");
  });

  it("does not keep a request that names no revision (a compaction summary), nor one larger than its bound", () => {
    const held = new HeldHistories(8, historySize([text("a"), text("b"), text("c")]));
    held.resolve(request("c", [text("a")], ""));
    expect(held.resolve(request("c", [text("b")], "r2", { revisionId: "", messageCount: 1 })).kind).toBe("base_unknown");
    held.resolve(request("d", [text("a"), text("b"), text("c"), text("d")], "r4"));
    expect(held.resolve(request("d", [text("e")], "r5", { revisionId: "r4", messageCount: 4 })).kind).toBe("base_unknown");
    // A single large tool result weighs more than the bound's worth of short messages.
    held.resolve(request("e", [create(MessageSchema, { body: { case: "toolResult", value: { callId: "c", toolName: "Read", content: "x".repeat(10_000) } } })], "r1"));
    expect(held.resolve(request("e", [text("f")], "r2", { revisionId: "r1", messageCount: 1 })).kind).toBe("base_unknown");
  });
});
