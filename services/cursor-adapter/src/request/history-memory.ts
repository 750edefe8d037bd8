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
 * Memory only: another adapter instance, a restart or an evicted entry means
 * the whole history is imported once, as without it. The store stays the
 * authority: it checks ownership and the base revision on every import.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";

export interface RememberedHistory {
  /** The revision the first `rootCount` roots imported to ("" = they hold no messages). */
  readonly revisionId: string;
  readonly rootCount: number;
  /** The kept roots among them (ClientHistory.historyRoots). */
  readonly historyRoots: readonly Uint8Array[];
  /** Text of the newest context message in their history (undefined = none). */
  readonly contextText: string | undefined;
}

interface Entry extends RememberedHistory {
  readonly memberId: string;
  readonly rootsHash: string;
}

/** Conversations remembered per process (least recently used first out). */
export const HISTORY_MEMORY_CONVERSATIONS = 2_000;

function hashOfRoots(roots: readonly Uint8Array[], count: number): string {
  const hash = createHash("sha256");
  const length = Buffer.alloc(4);
  for (let i = 0; i < count; i++) {
    const root = roots[i]!;
    length.writeUInt32BE(root.length);
    hash.update(length).update(root);
  }
  return hash.digest("hex");
}

export class HistoryMemory {
  readonly #entries: LRUCache<string, Entry>;

  constructor(maxConversations = HISTORY_MEMORY_CONVERSATIONS) {
    this.#entries = new LRUCache({ max: maxConversations });
  }

  /** The remembered import of this conversation when `roots` start with its roots. */
  recall(conversationId: string, memberId: string, roots: readonly Uint8Array[]): RememberedHistory | undefined {
    const entry = this.#entries.peek(conversationId);
    if (entry === undefined || entry.memberId !== memberId || entry.rootCount > roots.length) return undefined;
    if (hashOfRoots(roots, entry.rootCount) !== entry.rootsHash) return undefined;
    return this.#entries.get(conversationId);
  }

  /** `roots` (all of them) imported to `history.revisionId`. */
  remember(conversationId: string, memberId: string, roots: readonly Uint8Array[], history: Omit<RememberedHistory, "rootCount">): void {
    this.#entries.set(conversationId, { ...history, rootCount: roots.length, memberId, rootsHash: hashOfRoots(roots, roots.length) });
  }

  forget(conversationId: string): void {
    this.#entries.delete(conversationId);
  }

  get size(): number {
    return this.#entries.size;
  }
}
