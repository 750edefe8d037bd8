import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { historySize, MessageSchema } from "@byok/contracts";
import { RecentHistories } from "./recent-histories.ts";

/** A history of `count` tool results of `chars` characters each. */
function known(revisionId: string, count: number, chars = 10) {
  const messages = Array.from({ length: count }, (_, i) => create(MessageSchema, { body: { case: "toolResult", value: { callId: `c${i}`, toolName: "Read", content: "x".repeat(chars) } } }));
  return { revisionId, history: { messages, messageIds: messages.map((_, i) => `m${i}`), compaction: undefined, anchor: undefined } };
}

describe("RecentHistories", () => {
  it("keeps the newest history per conversation", () => {
    const recent = new RecentHistories();
    recent.set("c1", known("r1", 2));
    const newest = known("r2", 3);
    recent.set("c1", newest);
    expect(recent.get("c1")?.revisionId).toBe("r2");
    expect(recent.size).toBe(historySize(newest.history.messages));
    expect(recent.get("c2")).toBeUndefined();
  });

  it("evicts the least recently used past its bound of conversations", () => {
    const recent = new RecentHistories(2);
    recent.set("a", known("ra", 4));
    recent.set("b", known("rb", 4));
    recent.get("a");
    recent.set("c", known("rc", 4));
    expect(recent.get("b")).toBeUndefined();
    expect(recent.get("a")?.revisionId).toBe("ra");
  });

  it("is bounded by the size of what it holds, not by a count of messages: a few large tool results weigh more than many small ones", () => {
    const bound = historySize(known("probe", 10, 1000).history.messages);
    const recent = new RecentHistories(100, bound);
    recent.set("small", known("rs", 9, 1000));
    recent.set("large", known("rl", 2, 400_000));
    // One large history does not fit at all: it is not kept, and it displaces nothing.
    expect(recent.get("large")).toBeUndefined();
    expect(recent.get("small")?.revisionId).toBe("rs");
    recent.set("more", known("rm", 2, 1000));
    // Together over the bound: the least recently used goes.
    expect(recent.get("small")).toBeUndefined();
    expect(recent.get("more")?.revisionId).toBe("rm");
    expect(recent.size).toBeLessThanOrEqual(bound);
  });
});
