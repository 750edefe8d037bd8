import { describe, expect, it } from "vitest";
import { AppendSequencer } from "./append-sequencer.ts";

describe("AppendSequencer", () => {
  it("releases appends in seqno order however they arrive", () => {
    const seq = new AppendSequencer<string>(10);
    expect(seq.offer(2, "c")).toEqual({ kind: "queued" });
    expect(seq.offer(1, "b")).toEqual({ kind: "queued" });
    expect(seq.takeReady()).toEqual([]);
    expect(seq.offer(0, "a")).toEqual({ kind: "queued" });
    expect(seq.takeReady()).toEqual(["a", "b", "c"]);
    expect(seq.expected).toBe(3);
  });

  it("reports a seqno seen before (released or still waiting) as a duplicate", () => {
    const seq = new AppendSequencer<string>(10);
    seq.offer(0, "a");
    seq.takeReady();
    expect(seq.offer(0, "again")).toEqual({ kind: "duplicate" });
    seq.offer(2, "c");
    expect(seq.offer(2, "c again")).toEqual({ kind: "duplicate" });
    seq.offer(1, "b");
    expect(seq.takeReady()).toEqual(["b", "c"]);
  });

  it("bounds the early arrivals but always takes the expected seqno", () => {
    const seq = new AppendSequencer<number>(2);
    expect(seq.offer(1, 1).kind).toBe("queued");
    expect(seq.offer(2, 2).kind).toBe("queued");
    expect(seq.offer(3, 3)).toEqual({ kind: "overflow", limit: 2 });
    expect(seq.offer(0, 0).kind).toBe("queued");
    expect(seq.takeReady()).toEqual([0, 1, 2]);
  });
});
