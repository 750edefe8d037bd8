import { describe, expect, it, vi } from "vitest";
import type { StoreRequest } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { StoreFailure, type SettledCall } from "@byok/store-client";
import { LedgerWriter, type SettleStore } from "./ledger-writer.ts";

function settled(ticket: string): StoreRequest<"settleCall"> {
  return { ticketId: ticket, entry: { callRef: `request:${ticket}` } };
}

/** A store whose answers the test releases one batch at a time. */
function heldStore() {
  const batches: string[][] = [];
  const answers: Array<(results: Array<SettledCall | StoreFailure> | Error) => void> = [];
  const store: SettleStore = {
    settleCalls: (calls) => {
      batches.push(calls.map((c) => c.ticketId ?? ""));
      return new Promise((resolve, reject) => answers.push((results) => (results instanceof Error ? reject(results) : resolve(results))));
    },
  };
  return { store, batches, answers };
}

const written = (n: number): SettledCall[] => Array.from({ length: n }, () => ({ recorded: true, attempt: 1 }));

describe("LedgerWriter", () => {
  it("sends the first call at once and what queued meanwhile together, up to the batch size", async () => {
    const { store, batches, answers } = heldStore();
    const writer = new LedgerWriter(store, { log: silentLogger(), concurrency: 1, maxBatch: 3 });
    const done: string[] = [];
    for (const t of ["a", "b", "c", "d", "e"]) writer.enqueue(settled(t), () => done.push(t));
    expect(batches).toEqual([["a"]]);
    expect(writer.backlog).toBe(5);
    answers.shift()!(written(1));
    await expect.poll(() => batches.length).toBe(2);
    expect(batches[1]).toEqual(["b", "c", "d"]);
    expect(done).toEqual(["a"]);
    answers.shift()!(written(3));
    await expect.poll(() => batches.length).toBe(3);
    expect(batches[2]).toEqual(["e"]);
    answers.shift()!(written(1));
    await writer.flush(1_000);
    expect(done).toEqual(["a", "b", "c", "d", "e"]);
    expect(writer.backlog).toBe(0);
  });

  it("keeps the calls of a batch the store refused one of, and retries a batch the store could not take", async () => {
    vi.useFakeTimers();
    try {
      const { store, batches, answers } = heldStore();
      const writer = new LedgerWriter(store, { log: silentLogger(), concurrency: 2 });
      const done: string[] = [];
      writer.enqueue(settled("a"), () => done.push("a"));
      writer.enqueue(settled("b"), () => done.push("b"));
      expect(batches).toEqual([["a"], ["b"]]);
      answers.shift()!(new StoreFailure("unavailable", "accounting.settle_many", "no responders"));
      answers.shift()!([new StoreFailure("invalid", "accounting.settle_many", "ticket_id must be a uuid")]);
      await vi.advanceTimersByTimeAsync(0);
      expect(done).toEqual(["b"]);
      expect(batches).toHaveLength(2);
      // The unavailable batch goes again, unchanged, after its first backoff (0.25 s).
      await vi.advanceTimersByTimeAsync(250);
      expect(batches).toEqual([["a"], ["b"], ["a"]]);
      answers.shift()!(written(1));
      await vi.advanceTimersByTimeAsync(0);
      expect(done).toEqual(["b", "a"]);
      expect(writer.backlog).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("with a linger, waits that long for company, but never past a full batch or a flush", async () => {
    vi.useFakeTimers();
    try {
      const { store, batches, answers } = heldStore();
      const writer = new LedgerWriter(store, { log: silentLogger(), concurrency: 1, maxBatch: 3, lingerMs: 10 });
      writer.enqueue(settled("a"), () => undefined);
      writer.enqueue(settled("b"), () => undefined);
      await vi.advanceTimersByTimeAsync(9);
      expect(batches).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([["a", "b"]]);
      answers.shift()!(written(2));
      await vi.advanceTimersByTimeAsync(0);
      // A full batch goes at once.
      for (const t of ["c", "d", "e"]) writer.enqueue(settled(t), () => undefined);
      expect(batches).toEqual([["a", "b"], ["c", "d", "e"]]);
      answers.shift()!(written(3));
      await vi.advanceTimersByTimeAsync(0);
      // flush() sends what lingers.
      writer.enqueue(settled("f"), () => undefined);
      const flushed = writer.flush(1_000);
      expect(batches.at(-1)).toEqual(["f"]);
      answers.shift()!(written(1));
      await flushed;
      expect(writer.backlog).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
