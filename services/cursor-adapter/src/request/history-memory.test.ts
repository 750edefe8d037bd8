import { describe, expect, it } from "vitest";
import { HistoryMemory } from "./history-memory.ts";

const root = (n: number) => new Uint8Array(32).fill(n);

describe("HistoryMemory", () => {
  it("recalls the remembered import when the roots start with its roots, for the same member only", () => {
    const memory = new HistoryMemory();
    memory.remember("c1", "m1", [root(1), root(2)], { revisionId: "rev-2", historyRoots: [root(2)], contextText: "ctx" });
    expect(memory.recall("c1", "m1", [root(1), root(2), root(3)])).toMatchObject({ revisionId: "rev-2", rootCount: 2, contextText: "ctx" });
    expect(memory.recall("c1", "m1", [root(1), root(2)])?.rootCount).toBe(2);
    expect(memory.recall("c1", "other", [root(1), root(2), root(3)])).toBeUndefined();
    // A rollback (fewer roots) or an edited earlier root: nothing to reuse.
    expect(memory.recall("c1", "m1", [root(1)])).toBeUndefined();
    expect(memory.recall("c1", "m1", [root(1), root(9), root(3)])).toBeUndefined();
    expect(memory.recall("c2", "m1", [root(1), root(2)])).toBeUndefined();
    memory.forget("c1");
    expect(memory.recall("c1", "m1", [root(1), root(2)])).toBeUndefined();
  });

  it("tells inline roots apart by their bytes, not only by their length", () => {
    const memory = new HistoryMemory();
    memory.remember("c1", "m1", [new Uint8Array([1, 2]), new Uint8Array([3])], { revisionId: "r", historyRoots: [], contextText: undefined });
    expect(memory.recall("c1", "m1", [new Uint8Array([1]), new Uint8Array([2, 3])])).toBeUndefined();
    expect(memory.recall("c1", "m1", [new Uint8Array([1, 2]), new Uint8Array([3])])?.revisionId).toBe("r");
  });

  it("keeps at most its bound of conversations, the least recently used leaving first", () => {
    const memory = new HistoryMemory(2);
    memory.remember("a", "m", [root(1)], { revisionId: "ra", historyRoots: [], contextText: undefined });
    memory.remember("b", "m", [root(1)], { revisionId: "rb", historyRoots: [], contextText: undefined });
    memory.recall("a", "m", [root(1)]);
    memory.remember("c", "m", [root(1)], { revisionId: "rc", historyRoots: [], contextText: undefined });
    expect(memory.size).toBe(2);
    expect(memory.recall("b", "m", [root(1)])).toBeUndefined();
    expect(memory.recall("a", "m", [root(1)])?.revisionId).toBe("ra");
  });
});
