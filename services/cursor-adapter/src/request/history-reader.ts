/**
 * Reading the client's history roots into messages (client-history.ts), on
 * the event loop or in the adapter's CPU pool (cpu/cpu-pool.ts). A long
 * history is thousands of JSON roots: parsing them takes tens of
 * milliseconds, which would stall every other stream of the process, so
 * from POOL_MIN_ROOTS roots on the pool does it; shorter ones stay here,
 * where they cost less than handing them over. Roots parsed already (as they
 * came from the client, ParsedRoots) do not count: what is left of such a
 * read is putting messages in order.
 */
import { BLOB_ID_BYTES, blobKey } from "../checkpoint/blob-id.ts";
import { HistoryImportError, readClientHistory, rootBlobIds, type ClientHistory, type ParsedRoots } from "./client-history.ts";

export interface ReadHistoryTask {
  readonly roots: readonly Uint8Array[];
  /** Bytes of the root blobs (by hex id); other blobs may be present. */
  readonly blobs: ReadonlyMap<string, Uint8Array>;
  /** Index of roots[0] in the whole list. */
  readonly firstIndex: number;
  /** Roots parsed before, by hex id (never handed to the pool). */
  readonly parsed?: ParsedRoots;
}

export type ReadHistoryResult =
  | { readonly kind: "read"; readonly history: ClientHistory; readonly ignored: ReadonlyArray<{ readonly index: number; readonly reason: string }> }
  /** A HistoryImportError (the client's state cannot be understood), by message. */
  | { readonly kind: "refused"; readonly message: string };

export interface HistoryReader {
  /** Throws HistoryImportError when a root cannot be read. */
  read(task: ReadHistoryTask): Promise<{ history: ClientHistory; ignored: ReadonlyArray<{ index: number; reason: string }> }>;
}

/** From this many roots on, a pool reads the history. */
export const POOL_MIN_ROOTS = 64;

/** The read itself (on whichever thread runs it); never throws HistoryImportError. */
export function readHistoryTask(task: ReadHistoryTask): ReadHistoryResult {
  const ignored: Array<{ index: number; reason: string }> = [];
  try {
    const history = readClientHistory(task.roots, task.blobs, (index, reason) => ignored.push({ index, reason }), task.firstIndex, task.parsed);
    return { kind: "read", history, ignored };
  } catch (error) {
    if (error instanceof HistoryImportError) return { kind: "refused", message: error.message };
    throw error;
  }
}

function settle(result: ReadHistoryResult): { history: ClientHistory; ignored: ReadonlyArray<{ index: number; reason: string }> } {
  if (result.kind === "refused") throw new HistoryImportError(result.message);
  return { history: result.history, ignored: result.ignored };
}

export const inlineHistoryReader: HistoryReader = {
  read: async (task) => settle(readHistoryTask(task)),
};

/** A reader that hands long histories to `run` (the pool) and reads short ones inline. */
export function pooledHistoryReader(run: (task: ReadHistoryTask) => Promise<ReadHistoryResult>): HistoryReader {
  return {
    async read(task) {
      if (unparsedCount(task) < POOL_MIN_ROOTS) return settle(readHistoryTask(task));
      // Only the roots' own blobs cross to the worker thread.
      const blobs = new Map<string, Uint8Array>();
      for (const id of rootBlobIds(task.roots)) {
        const key = blobKey(id);
        const bytes = task.blobs.get(key);
        if (bytes !== undefined) blobs.set(key, bytes);
      }
      return settle(await run({ roots: task.roots, blobs, firstIndex: task.firstIndex }));
    },
  };
}

/** Roots of the task that are not parsed yet. */
function unparsedCount(task: ReadHistoryTask): number {
  const parsed = task.parsed;
  if (parsed === undefined || parsed.size === 0) return task.roots.length;
  let count = 0;
  for (const root of task.roots) if (root.length !== BLOB_ID_BYTES || !parsed.has(blobKey(root))) count += 1;
  return count;
}
