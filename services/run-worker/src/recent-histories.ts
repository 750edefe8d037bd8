/**
 * The histories this worker last held, per conversation (issue 15: flat cost
 * as conversations grow). Revisions are immutable, so a history held for a
 * revision id stays true: the next run of the conversation names it to
 * run.begin (and each reload after a tool round names the revision the engine
 * holds), and the store sends only what came after it. A conversation this
 * worker never ran, or one evicted here, loads its whole history once.
 *
 * Bounded by conversations and by the size of the histories held in all
 * (historySize of @byok/contracts: one tool result may be megabytes; least
 * recently used out first), so an idle worker holds at most that much.
 */
import { historySize } from "@byok/contracts";
import type { KnownHistory } from "@byok/store-client";
import { LRUCache } from "lru-cache";

export const RECENT_CONVERSATIONS = 512;
/** Bytes of history held in all (about: historySize). */
export const RECENT_BYTES = 128 * 1024 * 1024;

export class RecentHistories {
  readonly #entries: LRUCache<string, KnownHistory>;

  constructor(maxConversations = RECENT_CONVERSATIONS, maxBytes = RECENT_BYTES) {
    // A history larger than maxBytes is not kept (and replaces none).
    this.#entries = new LRUCache({ max: maxConversations, maxSize: maxBytes, sizeCalculation: (known) => Math.max(1, historySize(known.history.messages)) });
  }

  get(conversationId: string): KnownHistory | undefined {
    return this.#entries.get(conversationId);
  }

  set(conversationId: string, known: KnownHistory): void {
    this.#entries.set(conversationId, known);
  }

  /** Size of the histories held in all (historySize). */
  get size(): number {
    return this.#entries.calculatedSize;
  }
}
