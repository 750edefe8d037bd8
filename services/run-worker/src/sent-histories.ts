/**
 * Which history this worker last sent to the provider gateway, per
 * conversation (issue 15: flat cost as conversations grow). A model call
 * whose history continues that one sends only the messages after it, naming
 * the revision as its base (ModelRequest.history_base): the gateway keeps the
 * history of the last request per conversation. Continuation is checked by
 * the stored message ids, so a history that was compacted, rolled back or
 * forked is sent whole again.
 *
 * Bounded by conversations (least recently used out first); an entry is a
 * revision id and the ids of its messages.
 */
import { create } from "@bufbuild/protobuf";
import { HistoryBaseSchema, type HistoryBase } from "@byok/contracts";
import { LRUCache } from "lru-cache";

export const SENT_CONVERSATIONS = 1024;

/** The stored history a request's messages are: its revision and the ids of its messages, in order. */
export interface RequestHistory {
  readonly revisionId: string;
  readonly messageIds: readonly string[];
}

export class SentHistories {
  readonly #entries: LRUCache<string, RequestHistory>;

  constructor(maxConversations = SENT_CONVERSATIONS) {
    this.#entries = new LRUCache({ max: maxConversations });
  }

  /** The base a request of `conversationId` with history `history` may name, if the last one sent is a prefix of it. */
  baseFor(conversationId: string, history: RequestHistory): HistoryBase | undefined {
    const sent = this.#entries.get(conversationId);
    if (sent === undefined || sent.revisionId === "" || sent.messageIds.length === 0 || sent.messageIds.length > history.messageIds.length) return undefined;
    for (let i = 0; i < sent.messageIds.length; i++) if (sent.messageIds[i] !== history.messageIds[i]) return undefined;
    return create(HistoryBaseSchema, { revisionId: sent.revisionId, messageCount: sent.messageIds.length });
  }

  /** The gateway took a request with this whole history. */
  sent(conversationId: string, history: RequestHistory): void {
    this.#entries.set(conversationId, history);
  }

  /** The gateway did not hold the base: the next request of the conversation goes whole. */
  forget(conversationId: string): void {
    this.#entries.delete(conversationId);
  }
}
