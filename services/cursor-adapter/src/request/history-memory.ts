/**
 * What this adapter process last imported for each conversation, so the next
 * turn imports only what is new (issue 15, flat cost as conversations grow).
 *
 * A checkpoint's history is its list of roots; a root id is the SHA-256 of the
 * root's bytes (older clients inline the bytes), so the same roots always mean
 * the same messages. When a turn's roots start with the roots remembered for
 * its conversation, their messages are already the remembered revision: only
 * the roots after them are fetched, parsed and sent to history.import (on top
 * of that revision). The roots are compared through one hash of the prefix, so
 * an entry is a few hundred bytes plus the kept root ids.
 *
 * A system root first in the list is not history (every run writes its own):
 * the remembered roots are those after it, and they may follow a different
 * system root on the next turn (the checkpoint this gateway wrote replaced
 * the client's, or the mode or model changed the system text). Such a root is
 * handed back as `leadToCheck`: the caller reads it, and the recall holds only
 * when it is a system root.
 *
 * Memory only: another adapter instance, a restart or an evicted entry means
 * the whole history is imported once, as without it. The store stays the
 * authority: it checks ownership and the base revision on every import.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";

export interface RememberedHistory {
  /** The revision the remembered roots imported to ("" = they hold no messages). */
  readonly revisionId: string;
  /** Index of the first remembered root in the roots recalled with: 0, or 1 after a leading system root. */
  readonly firstRoot: number;
  /** How many roots, from `firstRoot` on, the remembered history covers. */
  readonly rootCount: number;
  /** The kept roots among them (ClientHistory.historyRoots). */
  readonly historyRoots: readonly Uint8Array[];
  /** Text of the newest context message in their history (undefined = none). */
  readonly contextText: string | undefined;
  /** roots[0] when it must still be checked to be a system root (it is not the one remembered). */
  readonly leadToCheck: Uint8Array | undefined;
}

/** What an import of a conversation's roots gave. */
export interface ImportedRoots {
  readonly revisionId: string;
  readonly historyRoots: readonly Uint8Array[];
  readonly contextText: string | undefined;
  /** roots[0] is a system root, not history. */
  readonly leadingSystemRoot: boolean;
}

interface Entry {
  readonly memberId: string;
  readonly revisionId: string;
  readonly historyRoots: readonly Uint8Array[];
  readonly contextText: string | undefined;
  /** The leading system root of the roots remembered (undefined = there was none). */
  readonly lead: Uint8Array | undefined;
  /** Roots after `lead`, and their hash. */
  readonly rootCount: number;
  readonly rootsHash: string;
}

/** Conversations remembered per process (least recently used first out). */
export const HISTORY_MEMORY_CONVERSATIONS = 2_000;

/** SHA-256 of the roots, each after its length; the roots are joined first and hashed in one call (two native calls per root were most of it). */
function hashOfRoots(roots: readonly Uint8Array[], from: number, to: number): string {
  let size = 0;
  for (let i = from; i < to; i++) size += 4 + roots[i]!.length;
  const joined = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = from; i < to; i++) {
    const root = roots[i]!;
    joined.writeUInt32BE(root.length, at);
    joined.set(root, at + 4);
    at += 4 + root.length;
  }
  return createHash("sha256").update(joined).digest("hex");
}

function sameBytes(a: Uint8Array, b: Uint8Array | undefined): boolean {
  return b !== undefined && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

export class HistoryMemory {
  readonly #entries: LRUCache<string, Entry>;

  constructor(maxConversations = HISTORY_MEMORY_CONVERSATIONS) {
    this.#entries = new LRUCache({ max: maxConversations });
  }

  /**
   * The remembered import of this conversation when `roots` start with its
   * roots: right away, or after one root (a system root, possibly another one
   * than remembered: then `leadToCheck` is set). Only for the same member.
   */
  recall(conversationId: string, memberId: string, roots: readonly Uint8Array[]): RememberedHistory | undefined {
    const entry = this.#entries.peek(conversationId);
    if (entry === undefined || entry.memberId !== memberId) return undefined;
    const n = entry.rootCount;
    let firstRoot: number;
    if (entry.lead === undefined && n <= roots.length && hashOfRoots(roots, 0, n) === entry.rootsHash) firstRoot = 0;
    else if (n + 1 <= roots.length && hashOfRoots(roots, 1, n + 1) === entry.rootsHash) firstRoot = 1;
    else return undefined;
    this.#entries.get(conversationId);
    const lead = roots[0];
    return {
      revisionId: entry.revisionId,
      firstRoot,
      rootCount: n,
      historyRoots: entry.historyRoots,
      contextText: entry.contextText,
      leadToCheck: firstRoot === 1 && lead !== undefined && !sameBytes(lead, entry.lead) ? lead : undefined,
    };
  }

  /** `roots` (all of them) imported as `imported`. */
  remember(conversationId: string, memberId: string, roots: readonly Uint8Array[], imported: ImportedRoots): void {
    const lead = imported.leadingSystemRoot ? roots[0] : undefined;
    const from = lead === undefined ? 0 : 1;
    this.#entries.set(conversationId, {
      memberId,
      revisionId: imported.revisionId,
      historyRoots: imported.historyRoots,
      contextText: imported.contextText,
      lead,
      rootCount: roots.length - from,
      rootsHash: hashOfRoots(roots, from, roots.length),
    });
  }

  forget(conversationId: string): void {
    this.#entries.delete(conversationId);
  }

  get size(): number {
    return this.#entries.size;
  }
}
