/**
 * The history one run works on: the messages of its head revision, their
 * stored ids, the newest provider measurement of a prefix of them, and
 * whether the head is a compacted revision. Loads ask the store only for what
 * follows the revision held now (the known history).
 */
import type { Message } from "@byok/contracts";
import type { KnownHistory, RevisionHistory, StoreClient } from "@byok/store-client";
import type { ContextAnchor } from "./context-estimate.ts";

export interface CompactedHead {
  readonly sourceRevisionId: string;
  readonly summarizedCount: number;
}

export class RunHistory {
  readonly #store: StoreClient;
  /** The run's head revision (also moved by appends that do not reload). */
  head: string;
  messages: Message[] = [];
  /** Stored ids of `messages`. */
  messageIds: string[] = [];
  /** The newest provider measurement of a prefix of `messages`. */
  anchor: ContextAnchor | undefined;
  /** Set while `head` is a compacted revision (recovery re-sends its commit). */
  compactedHead: CompactedHead | undefined;
  /** The revision `messages` is the whole history of (undefined until loaded). */
  #known: KnownHistory | undefined;

  constructor(store: StoreClient, head: string) {
    this.#store = store;
    this.head = head;
  }

  /** The history last held, whole (for the next run of the conversation on this worker). */
  get known(): KnownHistory | undefined {
    return this.#known;
  }

  /** Only what follows the revision held now travels (the store sends the rest when it is not in the chain). */
  async load(revisionId: string): Promise<void> {
    this.use(revisionId, await this.#store.revisionHistory(revisionId, this.#known));
  }

  use(revisionId: string, loaded: RevisionHistory): void {
    this.head = revisionId;
    if (revisionId !== "") this.#known = { revisionId, history: loaded };
    this.messages = loaded.messages;
    this.messageIds = loaded.messageIds;
    const anchor = loaded.anchor;
    this.anchor =
      anchor !== undefined && anchor.messageCount <= loaded.messages.length ? { messageCount: anchor.messageCount, inputTokens: Number(anchor.inputTokens) } : undefined;
    const compaction = loaded.compaction;
    this.compactedHead =
      compaction !== undefined && compaction.revisionId === revisionId
        ? { sourceRevisionId: compaction.sourceRevisionId, summarizedCount: compaction.summarizedCount }
        : undefined;
  }
}
