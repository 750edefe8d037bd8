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

export const RECENT_CONVERSATIONS = 512;
export const RECENT_MESSAGES = 50_000;

export class RecentHistories {
  readonly #maxConversations: number;
  readonly #maxMessages: number;
  readonly #entries = new Map<string, KnownHistory>();
  #messages = 0;

  constructor(maxConversations = RECENT_CONVERSATIONS, maxMessages = RECENT_MESSAGES) {
    this.#maxConversations = maxConversations;
    this.#maxMessages = maxMessages;
  }

  get(conversationId: string): KnownHistory | undefined {
    const entry = this.#entries.get(conversationId);
    if (entry === undefined) return undefined;
    this.#entries.delete(conversationId);
    this.#entries.set(conversationId, entry);
    return entry;
  }

  set(conversationId: string, known: KnownHistory): void {
    this.#remove(conversationId);
    if (known.history.messages.length > this.#maxMessages) return;
    this.#entries.set(conversationId, known);
    this.#messages += known.history.messages.length;
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxConversations && this.#messages <= this.#maxMessages) break;
      this.#remove(oldest);
    }
  }

  /** Messages held in all. */
  get messages(): number {
    return this.#messages;
  }

  #remove(conversationId: string): void {
    const entry = this.#entries.get(conversationId);
    if (entry === undefined) return;
    this.#entries.delete(conversationId);
    this.#messages -= entry.history.messages.length;
  }
}
