import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { planCompaction, summaryMessage, summaryTextOf } from "./compaction-plan.ts";
import { byteRatioCounter } from "./token-count.ts";

const counter = byteRatioCounter(1); // one token per byte: sizes below are exact
const user = (text: string, origin = UserOrigin.USER): Message =>
  create(MessageSchema, { body: { case: "user", value: { clientId: "", origin, content: [{ part: { case: "text", value: { text } } }] } } });
const call = (id: string): Message =>
  create(MessageSchema, { body: { case: "assistant", value: { content: [{ part: { case: "toolCall", value: { callId: id, name: "Read", argumentsJson: "{}" } } }] } } });
const result = (id: string, size: number): Message => create(MessageSchema, { body: { case: "toolResult", value: { callId: id, toolName: "Read", content: "x".repeat(size) } } });
const answer = (text: string): Message => create(MessageSchema, { body: { case: "assistant", value: { content: [{ part: { case: "text", value: { text } } }] } } });

function plan(history: Message[], budget: number, tailTurns = 1) {
  return planCompaction({ history, budget, promptTokens: 100, summaryPromptTokens: 50, requestText: "Summarize.", counter, settings: { tailTurns, summaryMaxTokens: 500 } });
}

describe("planCompaction", () => {
  const history = [
    user("<ctx>", UserOrigin.CONTEXT),
    user("turn one"),
    answer("one done"),
    user("turn two"),
    call("a"),
    result("a", 400),
    call("b"),
    result("b", 400),
  ];

  it("keeps the latest context and the newest turn, summarizes the rest, and the summary request ends on a user message", () => {
    const p = plan(history, 10_000);
    expect(p.kind).toBe("plan");
    if (p.kind !== "plan") return;
    expect(p.kept).toEqual([0, 3, 4, 5, 6, 7]);
    expect(p.summarizedCount).toBe(2);
    expect(p.summaryMessages.at(-1)?.body.case).toBe("user");
    expect(p.summaryMessages.map((m) => m.body.case)).toEqual(["user", "assistant", "user"]);
  });

  it("bounds a tail too large for the budget to its first message and the newest whole rounds", () => {
    // Room for the tail: 1400 - 100 (prompt) - 500 (summary) - 9 (context) = 791; the whole turn takes 842.
    const p = plan(history, 1_400);
    if (p.kind !== "plan") throw new Error(p.kind);
    expect(p.kept).toEqual([0, 3, 6, 7]);
    // The dropped round is summarized with its result, never split from it.
    const text = JSON.stringify(p.summaryMessages);
    expect(text).toContain("[tool call Read {}]");
    expect(text).toContain("[tool result of Read]");
  });

  it("trims the summary call's history from the oldest end at round boundaries, keeping a previous summary first", () => {
    const long = [summaryMessage("earlier summary", "rev-0"), user("t1"), call("x"), result("x", 3000), user("t2"), call("y"), result("y", 300), user("now")];
    const p = planCompaction({ history: long, budget: 2_000, promptTokens: 0, summaryPromptTokens: 0, requestText: "Summarize.", counter, settings: { tailTurns: 1, summaryMaxTokens: 500 } });
    if (p.kind !== "plan") throw new Error(p.kind);
    const texts = p.summaryMessages.map((m) => JSON.stringify(m));
    expect(texts[0]).toContain("earlier summary");
    expect(texts.join("")).not.toContain("x".repeat(3000));
    expect(texts.join("")).toContain("y".repeat(0) + "[tool result of Read]");
    expect(p.summaryMessages.at(-1)?.body.case).toBe("user");
  });

  it("has nothing to do when the history is only the newest turn", () => {
    expect(plan([user("only"), call("a"), result("a", 10)], 10_000).kind).toBe("nothing_to_summarize");
  });

  it("writes the summary message with origin SUMMARY and a client id naming the replaced revision", () => {
    const m = summaryMessage(" done things ", "rev-9");
    expect(m.body.case === "user" && m.body.value.origin).toBe(UserOrigin.SUMMARY);
    expect(m.body.case === "user" && m.body.value.clientId).toBe("summary:rev-9");
    expect(summaryTextOf(m)).toBe("done things");
  });
});
