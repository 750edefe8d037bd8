import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { HistoryImportError } from "../request/client-history.ts";
import { inlineHistoryReader, POOL_MIN_ROOTS } from "../request/history-reader.ts";
import { createCpuPool, type CpuPool } from "./cpu-pool.ts";

function rootsOf(count: number): { roots: Uint8Array[]; blobs: Map<string, Uint8Array> } {
  const blobs = new Map<string, Uint8Array>();
  const roots = Array.from({ length: count }, (_, i) => {
    const bytes = new TextEncoder().encode(JSON.stringify({ role: i % 2 === 0 ? "user" : "assistant", content: `message ${i}` }));
    const id = createHash("sha256").update(bytes).digest();
    blobs.set(id.toString("hex"), bytes);
    return new Uint8Array(id);
  });
  return { roots, blobs };
}

describe("CPU pool: history reading", () => {
  let pool: CpuPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it("reads a long history in a worker thread into the same messages as on the event loop", async () => {
    pool = createCpuPool({ maxThreads: 1 });
    const task = { ...rootsOf(POOL_MIN_ROOTS * 2), firstIndex: 0 };
    const pooled = await pool.histories.read(task);
    const inline = await inlineHistoryReader.read(task);
    expect(pooled.history.messages).toHaveLength(POOL_MIN_ROOTS * 2);
    expect(pooled.history.messages).toEqual(inline.history.messages);
    expect(pooled.history.historyRoots).toEqual(inline.history.historyRoots);
  });

  it("refuses a history whose root is missing with a HistoryImportError, as on the event loop", async () => {
    pool = createCpuPool({ maxThreads: 1 });
    const { roots, blobs } = rootsOf(POOL_MIN_ROOTS + 1);
    blobs.delete(Buffer.from(roots[5]!).toString("hex"));
    await expect(pool.histories.read({ roots, blobs, firstIndex: 0 })).rejects.toBeInstanceOf(HistoryImportError);
  });
});
