/**
 * The client-side picture of the conversation during one run: which roots are
 * settled, the run's turn, the last settled checkpoint. Produces the frames of a
 * commit in the order Cursor expects (cursor-agent-protocol §9.1, ARCHITECTURE
 * §6): every new blob SET and acknowledged -> turn_ended -> staged checkpoint
 * (pending = the assistant JSON, roots without it) -> settled checkpoint (roots
 * += assistant, pending empty).
 */
import type { Message, Usage } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import { rootBytesOf, rootJsonOf, systemRootJson } from "../projection/root-json.ts";
import { turnEndedMessage } from "../interaction/turn-ended.ts";
import { buildCheckpoint, checkpointMessage, referencedBlobIds } from "./checkpoint-builder.ts";
import type { ClientBlobs } from "./client-blobs.ts";
import { BLOB_ID_BYTES } from "./blob-id.ts";
import { stepBlobsOf, turnBlob, userMessageBlob } from "./turn-blobs.ts";

export interface ProjectionSetup {
  /** The client's conversation_state of this run request. */
  base: agent.ConversationStateStructure;
  blobs: ClientBlobs;
  systemText: string;
  /** The client's history roots to keep (its system root already left out). */
  historyRoots: readonly Uint8Array[];
  contextWindow: number;
  mode: agent.AgentMode | undefined;
  /** Present when the run starts a new turn (a user message). */
  turn: { userMessage: agent.UserMessage; requestId: string } | undefined;
  /**
   * Called with every root blob this run creates, so the store keeps it for the
   * next turn's import. Must not reject; a checkpoint goes out only after it settled.
   */
  onNewRoot(bytes: Uint8Array): Promise<void>;
}

export interface FinalAnswerCommit {
  /** Messages the commit appended (the final assistant message). */
  appended: readonly Message[];
  turnUsage: Usage | undefined;
  contextTokens: bigint | undefined;
  /** Durations of the thinking blocks of the answer's model call, in order. */
  thinkingDurationsMs: readonly number[];
}

const encoder = new TextEncoder();

export class ConversationProjection {
  readonly #setup: ProjectionSetup;
  readonly #blobs: ClientBlobs;
  #settledRoots: Uint8Array[];
  readonly #userMessageId: Uint8Array | undefined;
  #turnSteps: Uint8Array[] = [];
  #turnId: Uint8Array | undefined;
  #usedTokens: number | undefined;
  #lastSettled: agent.ConversationStateStructure | undefined;
  #rootsSaved: Promise<void>[] = [];

  constructor(setup: ProjectionSetup) {
    this.#setup = setup;
    this.#blobs = setup.blobs;
    for (const root of setup.historyRoots) if (root.length === BLOB_ID_BYTES) this.#blobs.markHeld(root);
    for (const turn of setup.base.turns) this.#blobs.markHeld(turn);
    const systemRoot = this.#putRoot(encoder.encode(systemRootJson(setup.systemText)));
    this.#settledRoots = [systemRoot, ...setup.historyRoots];
    this.#userMessageId = setup.turn ? this.#blobs.put(userMessageBlob(setup.turn.userMessage)) : undefined;
  }

  /** Roots for the run's initial messages (context, user); their blobs are SET now. */
  appendInitialMessages(messages: readonly Message[]): void {
    for (const message of messages) this.#settledRoots.push(this.#putRoot(rootBytesOf(message)));
  }

  /** Resolves when every blob SET so far was acknowledged. */
  async initialBlobsAcked(): Promise<void> {
    await this.#blobs.whenAcked([...this.#settledRoots, ...(this.#userMessageId ? [this.#userMessageId] : [])]);
    await this.#takeSavedRoots();
  }

  get settledRoots(): readonly Uint8Array[] {
    return this.#settledRoots;
  }

  /**
   * SETs the blobs of a final answer, waits for every ACK, then returns the
   * frames to send, in order: turn_ended, staged checkpoint, settled checkpoint.
   */
  async finalAnswerFrames(commit: FinalAnswerCommit): Promise<agent.AgentServerMessage[]> {
    const assistant = [...commit.appended].reverse().find((m) => m.body.case === "assistant");
    const newRoots = commit.appended.map((m) => this.#putRoot(rootBytesOf(m)));
    const newBlobs = [...newRoots];
    if (this.#userMessageId !== undefined && assistant?.body.case === "assistant") {
      const steps = stepBlobsOf(assistant.body.value, commit.thinkingDurationsMs).map((bytes) => this.#blobs.put(bytes));
      this.#turnSteps = [...this.#turnSteps, ...steps];
      this.#turnId = this.#blobs.put(turnBlob(this.#userMessageId, this.#turnSteps, this.#setup.turn?.requestId ?? ""));
      newBlobs.push(...steps, this.#turnId);
    }
    await this.#blobs.whenAcked(newBlobs);
    await this.#takeSavedRoots();

    if (commit.contextTokens !== undefined) this.#usedTokens = Number(commit.contextTokens);
    const staged = this.#checkpoint(this.#settledRoots, assistant === undefined ? [] : [rootJsonOf(assistant)]);
    this.#settledRoots = [...this.#settledRoots, ...newRoots];
    const settled = this.#checkpoint(this.#settledRoots, []);
    this.#lastSettled = settled;
    return [turnEndedMessage(commit.turnUsage), checkpointMessage(staged), checkpointMessage(settled)];
  }

  /** The last settled checkpoint again (the success tail repeats it), if there is one. */
  repeatSettledFrame(): agent.AgentServerMessage | undefined {
    return this.#lastSettled === undefined ? undefined : checkpointMessage(this.#lastSettled);
  }

  #putRoot(bytes: Uint8Array): Uint8Array {
    this.#rootsSaved.push(this.#setup.onNewRoot(bytes));
    return this.#blobs.put(bytes);
  }

  async #takeSavedRoots(): Promise<void> {
    const saving = this.#rootsSaved;
    this.#rootsSaved = [];
    await Promise.all(saving);
  }

  #checkpoint(roots: readonly Uint8Array[], pending: readonly string[]): agent.ConversationStateStructure {
    const turns = this.#turnId === undefined ? this.#setup.base.turns : [...this.#setup.base.turns, this.#turnId];
    const checkpoint = buildCheckpoint(this.#setup.base, {
      roots,
      turns,
      pending,
      usedTokens: this.#usedTokens,
      maxTokens: this.#setup.contextWindow,
      mode: this.#setup.mode,
    });
    // The barrier: nothing goes out that references a blob the client has not confirmed.
    this.#blobs.assertAcked(referencedBlobIds(checkpoint));
    return checkpoint;
  }
}
