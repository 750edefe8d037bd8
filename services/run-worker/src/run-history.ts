/**
 * The history one run works on: the messages of its head revision, their
 * stored ids, the newest provider measurement of a prefix of them, and
 * whether the head is a compacted revision. Loads ask the store only for what
 * follows the revision held now (the known history).
 */
import { create } from "@bufbuild/protobuf";
import { ContextAnchorSchema, type Message } from "@byok/contracts";
import type { KnownHistory, RevisionHistory, StoreClient } from "@byok/store-client";
import type { ContextAnchor } from "./context-estimate.ts";
import type { RequestHistory } from "./sent-histories.ts";

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

  /** `messages` as a stored history (its revision and message ids), when they are the whole history of the head. */
  get asStored(): RequestHistory | undefined {
    const known = this.#known;
    if (known === undefined || known.revisionId !== this.head || known.history.messages !== this.messages) return undefined;
    return { revisionId: known.revisionId, messageIds: known.history.messageIds };
  }

  /** The history last held, whole (for the next run of the conversation on this worker). */
  get known(): KnownHistory | undefined {
    return this.#known;
  }

  /**
   * The run appended `messages` onto the head as revision `revisionId`. With their stored ids the
   * whole history of the new head is known here (the next run of the conversation starts from it
   * without a read); without them only the head moves.
   */
  appended(revisionId: string, messages: readonly Message[], messageIds: readonly string[]): void {
    const known = this.#known;
    const parent = this.head;
    const measured = this.anchor;
    this.head = revisionId;
    if (known === undefined || known.revisionId !== parent || messageIds.length !== messages.length) return;
    const history = known.history;
    // The measurement of the call that made these messages is of the parent's history (what the store records with the append).
    const anchor =
      measured !== undefined && measured.messageCount === history.messages.length
        ? create(ContextAnchorSchema, { revisionId: parent, messageCount: measured.messageCount, inputTokens: BigInt(measured.inputTokens) })
        : history.anchor;
    this.use(revisionId, { ...history, messages: [...history.messages, ...messages], messageIds: [...history.messageIds, ...messageIds], anchor });
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
