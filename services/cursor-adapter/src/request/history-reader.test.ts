import { describe, expect, it } from "vitest";
import { blobIdOf, blobKey } from "../checkpoint/blob-id.ts";
import { HistoryImportError, parseRootInto, type ParsedRoots } from "./client-history.ts";
import { inlineHistoryReader, pooledHistoryReader, POOL_MIN_ROOTS, readHistoryTask, type ReadHistoryTask } from "./history-reader.ts";

const encoder = new TextEncoder();

function history(count: number): { roots: Uint8Array[]; blobs: Map<string, Uint8Array> } {
  const blobs = new Map<string, Uint8Array>();
  const roots = Array.from({ length: count }, (_, i) => {
    const bytes = encoder.encode(JSON.stringify({ role: i % 2 === 0 ? "user" : "assistant", id: `m${i}`, content: `message ${i}` }));
    const id = blobIdOf(bytes);
    blobs.set(blobKey(id), bytes);
    return id;
  });
  return { roots, blobs };
}

function parsedAll(blobs: ReadonlyMap<string, Uint8Array>): ParsedRoots {
  const parsed: ParsedRoots = new Map();
  for (const [key, bytes] of blobs) parseRootInto(parsed, key, bytes);
  return parsed;
}

describe("history reading with roots parsed as they arrived", () => {
  it("reads a long history whose roots are parsed on the event loop, into the same messages", async () => {
    const { roots, blobs } = history(POOL_MIN_ROOTS * 2);
    const handed: ReadHistoryTask[] = [];
    const reader = pooledHistoryReader(async (task) => {
      handed.push(task);
      return readHistoryTask(task);
    });
    const preparsed = await reader.read({ roots, blobs, firstIndex: 0, parsed: parsedAll(blobs) });
    expect(handed).toHaveLength(0);
    const plain = await inlineHistoryReader.read({ roots, blobs, firstIndex: 0 });
    expect(preparsed.history).toEqual(plain.history);

    // Without parsed roots the pool reads it, and gets no parsed roots.
    await reader.read({ roots, blobs, firstIndex: 0 });
    expect(handed).toHaveLength(1);
    expect(handed[0]!.parsed).toBeUndefined();
  });

  it("refuses a root that did not parse with the root's index", async () => {
    const { roots, blobs } = history(3);
    const bad = encoder.encode("{not json");
    const badId = blobIdOf(bad);
    blobs.set(blobKey(badId), bad);
    const parsed = parsedAll(blobs);
    await expect(inlineHistoryReader.read({ roots: [...roots, badId], blobs, firstIndex: 5, parsed })).rejects.toThrow(new HistoryImportError("root 8: root blob is not JSON"));
  });
});
