import { describe, expect, it } from "vitest";
import type { Message } from "@byok/contracts";
import { RecentHistories } from "./recent-histories.ts";

function known(revisionId: string, count: number) {
  const messages = Array.from({ length: count }, () => ({}) as Message);
  return { revisionId, history: { messages, messageIds: messages.map((_, i) => `m${i}`), compaction: undefined, anchor: undefined } };
}

describe("RecentHistories", () => {
  it("keeps the newest history per conversation", () => {
    const recent = new RecentHistories();
    recent.set("c1", known("r1", 2));
    recent.set("c1", known("r2", 3));
    expect(recent.get("c1")?.revisionId).toBe("r2");
    expect(recent.messages).toBe(3);
    expect(recent.get("c2")).toBeUndefined();
  });

  it("evicts the least recently used past its bounds of conversations and of messages", () => {
    const recent = new RecentHistories(2, 10);
    recent.set("a", known("ra", 4));
    recent.set("b", known("rb", 4));
    recent.get("a");
    recent.set("c", known("rc", 4));
    expect(recent.get("b")).toBeUndefined();
    expect(recent.messages).toBe(8);
    recent.set("d", known("rd", 5));
    expect(recent.get("a")).toBeUndefined();
    expect(recent.messages).toBe(9);
    recent.set("e", known("re", 6));
    expect(recent.get("c")).toBeUndefined();
    expect(recent.get("d")).toBeUndefined();
    expect(recent.messages).toBe(6);
    recent.set("huge", known("rh", 11));
    expect(recent.get("huge")).toBeUndefined();
    expect(recent.get("e")?.revisionId).toBe("re");
  });
});
