/**
 * The histories this worker last held, per conversation (issue 15: flat cost
 * as conversations grow). Revisions are immutable, so a history held for a
 * revision id stays true: the next run of the conversation names it to
 * run.begin (and each reload after a tool round names the revision the engine
 * holds), and the store sends only what came after it. A conversation this
 * worker never ran, or one evicted here, loads its whole history once.
 *
 * Bounded by conversations and by messages held in all (least recently used
 * out first), so an idle worker holds at most that much.
 */
import type { KnownHistory } from "@byok/store-client";
import { LRUCache } from "lru-cache";

export const RECENT_CONVERSATIONS = 512;
export const RECENT_MESSAGES = 50_000;

export class RecentHistories {
  readonly #entries: LRUCache<string, KnownHistory>;

  constructor(maxConversations = RECENT_CONVERSATIONS, maxMessages = RECENT_MESSAGES) {
    // A history larger than maxMessages is not kept (and replaces none); an empty one counts as 1.
    this.#entries = new LRUCache({ max: maxConversations, maxSize: maxMessages, sizeCalculation: (known) => Math.max(1, known.history.messages.length) });
  }

  get(conversationId: string): KnownHistory | undefined {
    return this.#entries.get(conversationId);
  }

  set(conversationId: string, known: KnownHistory): void {
    this.#entries.set(conversationId, known);
  }

  /** Messages held in all. */
  get messages(): number {
    return this.#entries.calculatedSize;
  }
}
