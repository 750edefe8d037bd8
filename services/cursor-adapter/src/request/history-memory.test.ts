import { describe, expect, it } from "vitest";
import { HistoryMemory } from "./history-memory.ts";

const root = (n: number) => new Uint8Array(32).fill(n);

describe("HistoryMemory", () => {
  it("recalls the remembered import when the roots start with its roots, for the same member only", () => {
    const memory = new HistoryMemory();
    memory.remember("c1", "m1", [root(1), root(2)], { revisionId: "rev-2", historyRoots: [root(2)], contextText: "ctx", leadingSystemRoot: false });
    expect(memory.recall("c1", "m1", [root(1), root(2), root(3)])).toMatchObject({ revisionId: "rev-2", firstRoot: 0, rootCount: 2, contextText: "ctx", leadToCheck: undefined });
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
    memory.remember("c1", "m1", [new Uint8Array([1, 2]), new Uint8Array([3])], { revisionId: "r", historyRoots: [], contextText: undefined, leadingSystemRoot: false });
    expect(memory.recall("c1", "m1", [new Uint8Array([1]), new Uint8Array([2, 3])])).toBeUndefined();
    expect(memory.recall("c1", "m1", [new Uint8Array([1, 2]), new Uint8Array([3])])?.revisionId).toBe("r");
  });

  it("keeps at most its bound of conversations, the least recently used leaving first", () => {
    const memory = new HistoryMemory(2);
    memory.remember("a", "m", [root(1)], { revisionId: "ra", historyRoots: [], contextText: undefined, leadingSystemRoot: false });
    memory.remember("b", "m", [root(1)], { revisionId: "rb", historyRoots: [], contextText: undefined, leadingSystemRoot: false });
    memory.recall("a", "m", [root(1)]);
    memory.remember("c", "m", [root(1)], { revisionId: "rc", historyRoots: [], contextText: undefined, leadingSystemRoot: false });
    expect(memory.size).toBe(2);
    expect(memory.recall("b", "m", [root(1)])).toBeUndefined();
    expect(memory.recall("a", "m", [root(1)])?.revisionId).toBe("ra");
  });

  it("recalls roots that come after a leading system root, asking for a check of a system root it does not know", () => {
    const memory = new HistoryMemory();
    // Imported without a system root (a checkpoint that had none): the next
    // checkpoint of this gateway puts its own in front.
    memory.remember("c1", "m1", [root(1), root(2)], { revisionId: "rev-2", historyRoots: [root(1), root(2)], contextText: undefined, leadingSystemRoot: false });
    const behindSystem = memory.recall("c1", "m1", [root(7), root(1), root(2), root(3)]);
    expect(behindSystem).toMatchObject({ revisionId: "rev-2", firstRoot: 1, rootCount: 2 });
    expect(behindSystem?.leadToCheck).toEqual(root(7));
    expect(memory.recall("c1", "m1", [root(7), root(1), root(9)])).toBeUndefined();

    // Imported behind a system root: the same one needs no check, another one does, none at all is not recalled.
    memory.remember("c1", "m1", [root(7), root(1), root(2), root(3)], { revisionId: "rev-3", historyRoots: [root(1), root(2), root(3)], contextText: undefined, leadingSystemRoot: true });
    expect(memory.recall("c1", "m1", [root(7), root(1), root(2), root(3), root(4)])).toMatchObject({ revisionId: "rev-3", firstRoot: 1, rootCount: 3, leadToCheck: undefined });
    expect(memory.recall("c1", "m1", [root(8), root(1), root(2), root(3)])?.leadToCheck).toEqual(root(8));
    expect(memory.recall("c1", "m1", [root(1), root(2), root(3), root(4)])).toBeUndefined();
  });
});
