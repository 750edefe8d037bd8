/**
 * The history of the last model request per conversation, so that the next
 * request of the conversation only carries what is new (issue 15: flat cost
 * as conversations grow). A run worker names what it sent before as the new
 * request's history_base; this gateway puts the two together, or answers that
 * it does not hold that base (it restarted, evicted it, or another gateway
 * served the last call), and the worker sends the whole history again.
 *
 * Keyed by conversation, so a request can only continue a history of its own
 * conversation. Bounded by conversations and by the size of the histories
 * held in all (historySize of @byok/contracts; least recently used out
 * first); a history larger than the bound is not kept and its next request
 * goes whole.
 */
import { historySize, type Message, type ModelRequest } from "@byok/contracts";
import { LRUCache } from "lru-cache";
import { addEstimates, estimateMessages, type MessagesEstimate } from "./accounting/estimate-tokens.ts";

export const HELD_CONVERSATIONS = 1024;
/** Bytes of history held in all (about: historySize). */
export const HELD_BYTES = 128 * 1024 * 1024;

interface HeldHistory {
  readonly revisionId: string;
  readonly messages: readonly Message[];
  /** historySize(messages) and the admission's estimate of them, kept so that a continued history costs only its new messages. */
  readonly size: number;
  readonly estimate: MessagesEstimate;
}

export type HistoryResolution =
  | { readonly kind: "whole"; readonly messages: Message[]; readonly estimate: MessagesEstimate }
  | { readonly kind: "base_unknown"; readonly message: string };

export class HeldHistories {
  readonly #entries: LRUCache<string, HeldHistory>;

  constructor(maxConversations = HELD_CONVERSATIONS, maxBytes = HELD_BYTES) {
    this.#entries = new LRUCache({ max: maxConversations, maxSize: maxBytes, sizeCalculation: (held) => Math.max(1, held.size) });
  }

  /** The request's whole model input (its base's history followed by its messages), kept for the next request. */
  resolve(request: ModelRequest): HistoryResolution {
    const base = request.historyBase;
    let messages = request.messages;
    let size = 0;
    let estimate = estimateMessages(request.messages);
    if (base !== undefined) {
      const held = this.#entries.get(request.conversationId);
      if (held === undefined || held.revisionId !== base.revisionId || held.messages.length !== base.messageCount) {
        return { kind: "base_unknown", message: `this gateway does not hold revision ${base.revisionId} (${base.messageCount} messages) of conversation ${request.conversationId}` };
      }
      messages = [...held.messages, ...request.messages];
      size = held.size;
      estimate = addEstimates(held.estimate, estimate);
    }
    if (request.historyRevisionId !== "") {
      size += historySize(request.messages);
      this.#entries.set(request.conversationId, { revisionId: request.historyRevisionId, messages, size, estimate });
    }
    return { kind: "whole", messages, estimate };
  }

  /** Size of the histories held in all (historySize). */
  get size(): number {
    return this.#entries.calculatedSize;
  }
}
