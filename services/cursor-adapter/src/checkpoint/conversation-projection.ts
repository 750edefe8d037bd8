/**
 * The client-side picture of the conversation during one run: which roots are
 * settled, the run's turn, read paths and todos, the last settled checkpoint.
 * Produces the frames of a commit in the order Cursor expects
 * (cursor-agent-protocol §4.5, §9, ARCHITECTURE §6), always after every new
 * blob was SET and acknowledged:
 * - final answer: turn_ended -> staged (pending = the assistant JSON, roots
 *   without it) -> settled (roots += assistant, pending empty);
 * - tool round staged: one staged checkpoint (pending = the whole assistant
 *   with all its calls, roots unchanged);
 * - tool round settled: one settled checkpoint (roots += the round's messages,
 *   pending empty, read paths, todos, mode and plan updated);
 * - compaction: summary + summary_completed, then one settled checkpoint whose
 *   roots are the system root and the compacted history (summary message,
 *   request context, tail), with the summary fields: ConversationSummary,
 *   a ConversationSummaryArchive (the replaced roots, the summary, the summary
 *   root), the archive list and self_summary_count + 1. Every later checkpoint
 *   of the run keeps them. The roots of kept messages are re-encoded from the
 *   stored messages (identical bytes, so the same blob ids, for roots this
 *   gateway wrote), so the next turn's import finds the compacted revision.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { MessageSchema, type AssistantMessage, type Message, type Usage } from "@byok/contracts";
import { agent, tools } from "@byok/cursor-protocol";
import { rootBytesOf, rootJsonOf, systemRootJson } from "../root-codec/root-json.ts";
import { turnEndedMessage } from "../interaction/turn-ended.ts";
import { interactionMessage } from "../interaction/update-message.ts";
import { buildCheckpoint, checkpointMessage, referencedBlobIds, type CheckpointSummary } from "./checkpoint-builder.ts";
import type { ClientBlobs } from "./client-blobs.ts";
import { BLOB_ID_BYTES, blobKey } from "./blob-id.ts";
import { todoBlob } from "./todo-blobs.ts";
import { stepBlobsOf, toolCallStepBlob, turnBlob, userMessageBlob } from "./turn-blobs.ts";

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

export interface ToolRoundStaged {
  /** The model's whole response: reasoning/text become turn steps now. */
  assistant: AssistantMessage;
  /** pending_tool_calls[0]: the assistant JSON with Cursor's pending metadata. */
  pendingJson: string;
  contextTokens: bigint | undefined;
  thinkingDurationsMs: readonly number[];
}

export interface ToolRoundSettled {
  /** The round's messages as committed, in commit order. */
  messages: readonly Message[];
  /** Completed tool cards, in the same order (turn steps). */
  toolCalls: readonly tools.ToolCall[];
  readPaths: readonly string[];
  /** The conversation's todo list; undefined = unchanged. */
  todos: readonly tools.TodoItem[] | undefined;
  /** The conversation's mode after an approved SwitchMode; undefined = unchanged. */
  mode: agent.AgentMode | undefined;
  /** Markdown of a plan CreatePlan made; undefined = unchanged. */
  plan: string | undefined;
  contextTokens: bigint | undefined;
}

export interface CompactionCommit {
  /** The new revision's whole history: summary message, request context, tail. */
  history: readonly Message[];
  /** The summary text (without the summary message's wrapping). */
  summary: string;
  /** Estimate of the new context. */
  contextTokens: bigint | undefined;
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
  /** The store save of every root this run put, by blob key (a root prepared early is saved once). */
  readonly #rootSaves = new Map<string, Promise<void>>();
  #initialAcked: Promise<void> | undefined;
  #readPaths: readonly string[];
  #todoIds: readonly Uint8Array[];
  #mode: agent.AgentMode | undefined;
  #planId: Uint8Array | undefined;
  /** Set once this run compacted the history. */
  #summary: CheckpointSummary | undefined;

  constructor(setup: ProjectionSetup) {
    this.#setup = setup;
    this.#blobs = setup.blobs;
    this.#readPaths = setup.base.readPaths;
    this.#todoIds = setup.base.todos;
    this.#mode = setup.mode;
    // Every root of the client's checkpoint is in its blob store, its leading system root too: a turn
    // whose system text did not change does not SET it again.
    for (const root of [...setup.base.rootPromptMessagesJson, ...setup.historyRoots]) if (root.length === BLOB_ID_BYTES) this.#blobs.markHeld(root);
    for (const turn of setup.base.turns) this.#blobs.markHeld(turn);
    for (const todo of setup.base.todos) this.#blobs.markHeld(todo);
    if (setup.base.plan !== undefined) this.#blobs.markHeld(setup.base.plan);
    for (const id of [setup.base.summary, setup.base.summaryArchive, ...setup.base.summaryArchives]) if (id !== undefined && id.length > 0) this.#blobs.markHeld(id);
    const systemRoot = this.#putRoot(encoder.encode(systemRootJson(setup.systemText)));
    this.#settledRoots = [systemRoot, ...setup.historyRoots];
    this.#userMessageId = setup.turn ? this.#blobs.put(userMessageBlob(setup.turn.userMessage)) : undefined;
  }

  /** Roots for the run's initial messages (context, user); their blobs are SET now. */
  appendInitialMessages(messages: readonly Message[]): void {
    for (const message of messages) this.#settledRoots.push(this.#putRoot(rootBytesOf(message)));
  }

  /**
   * Resolves when the blobs of the history and the run's initial messages are
   * acknowledged. The model call does not wait for this; every checkpoint does
   * (they all reference these roots).
   */
  initialBlobsAcked(): Promise<void> {
    this.#initialAcked ??= (async () => {
      await this.#blobs.whenAcked([...this.#settledRoots, ...(this.#userMessageId ? [this.#userMessageId] : [])]);
      await this.#takeSavedRoots();
    })();
    return this.#initialAcked;
  }

  get settledRoots(): readonly Uint8Array[] {
    return this.#settledRoots;
  }

  /**
   * A model call's response, before the owner commits it (ClientEvent
   * response_complete): SETs the blobs its commit will reference (the turn's
   * new steps and turn blob; for a final answer also its root, saved in the
   * store too), so the client's ACKs come while the store appends. Nothing
   * else changes: the commit builds the same bytes, finds them sent and only
   * waits for their ACKs (a commit that differs SETs what it lacks, as
   * without this). A response never committed leaves blobs no checkpoint names.
   */
  prepareResponse(assistant: AssistantMessage, thinkingDurationsMs: readonly number[]): void {
    const steps = this.#stepIds(stepBlobsOf(assistant, thinkingDurationsMs));
    if (steps.length > 0) this.#turnBlob([...this.#turnSteps, ...steps]);
    if (!assistant.content.some((p) => p.part.case === "toolCall")) this.#sendRoot(rootBytesOf(create(MessageSchema, { body: { case: "assistant", value: assistant } })));
  }

  /**
   * SETs the blobs of a final answer, waits for every ACK, then returns the
   * frames to send, in order: turn_ended, staged checkpoint, settled checkpoint.
   */
  async finalAnswerFrames(commit: FinalAnswerCommit): Promise<agent.AgentServerMessage[]> {
    const assistant = [...commit.appended].reverse().find((m) => m.body.case === "assistant");
    const newRoots = commit.appended.map((m) => this.#putRoot(rootBytesOf(m)));
    const newBlobs = [...newRoots];
    if (assistant?.body.case === "assistant") newBlobs.push(...this.#addSteps(stepBlobsOf(assistant.body.value, commit.thinkingDurationsMs)));
    await Promise.all([this.initialBlobsAcked(), this.#blobs.whenAcked(newBlobs)]);
    await this.#takeSavedRoots();

    this.#noteContext(commit.contextTokens);
    const staged = this.#checkpoint(this.#settledRoots, assistant === undefined ? [] : [rootJsonOf(assistant)]);
    this.#settledRoots = [...this.#settledRoots, ...newRoots];
    const settled = this.#checkpoint(this.#settledRoots, []);
    this.#lastSettled = settled;
    return [turnEndedMessage(commit.turnUsage), checkpointMessage(staged), checkpointMessage(settled)];
  }

  /** Turn steps of the model's response SET and acknowledged, then the staged checkpoint of its tool round. */
  async toolRoundStagedFrames(round: ToolRoundStaged): Promise<agent.AgentServerMessage[]> {
    const newBlobs = this.#addSteps(stepBlobsOf(round.assistant, round.thinkingDurationsMs));
    await Promise.all([this.initialBlobsAcked(), this.#blobs.whenAcked(newBlobs)]);
    this.#noteContext(round.contextTokens);
    return [checkpointMessage(this.#checkpoint(this.#settledRoots, [round.pendingJson]))];
  }

  /** The round's roots, tool-call steps and todos SET and acknowledged, then the settled checkpoint. */
  async toolRoundSettledFrames(round: ToolRoundSettled): Promise<agent.AgentServerMessage[]> {
    const newRoots = round.messages.map((m) => this.#putRoot(rootBytesOf(m)));
    const todoIds = round.todos?.map((todo) => this.#blobs.put(todoBlob(todo)));
    const planId = round.plan === undefined ? undefined : this.#blobs.put(toBinary(tools.ConversationPlanSchema, create(tools.ConversationPlanSchema, { plan: round.plan })));
    const newBlobs = [...newRoots, ...(todoIds ?? []), ...(planId === undefined ? [] : [planId]), ...this.#addSteps(round.toolCalls.map(toolCallStepBlob))];
    await Promise.all([this.initialBlobsAcked(), this.#blobs.whenAcked(newBlobs)]);
    await this.#takeSavedRoots();

    this.#noteContext(round.contextTokens);
    this.#settledRoots = [...this.#settledRoots, ...newRoots];
    this.#readPaths = [...round.readPaths];
    if (todoIds !== undefined) this.#todoIds = todoIds;
    if (planId !== undefined) this.#planId = planId;
    if (round.mode !== undefined) this.#mode = round.mode;
    const settled = this.#checkpoint(this.#settledRoots, []);
    this.#lastSettled = settled;
    return [checkpointMessage(settled)];
  }

  /**
   * The compacted history's roots and the summary blobs SET and acknowledged,
   * then summary, summary_completed and the settled checkpoint.
   */
  async compactionFrames(commit: CompactionCommit): Promise<agent.AgentServerMessage[]> {
    const newRoots = commit.history.map((m) => this.#putRoot(rootBytesOf(m)));
    const summaryRoot = newRoots[0];
    if (summaryRoot === undefined) throw new Error("a compaction without a summary message");
    const kept = new Set(newRoots.map(blobKey));
    const replaced = this.#settledRoots.slice(1).filter((root) => !kept.has(blobKey(root)));
    const summaryId = this.#blobs.put(toBinary(agent.ConversationSummarySchema, create(agent.ConversationSummarySchema, { summary: commit.summary })));
    const archiveId = this.#blobs.put(
      toBinary(
        agent.ConversationSummaryArchiveSchema,
        // window_tail 0: none of the summarized roots stays in the window (the kept ones are not listed).
        create(agent.ConversationSummaryArchiveSchema, { summarizedMessages: replaced, summary: commit.summary, windowTail: 0, summaryMessage: summaryRoot }),
      ),
    );
    await Promise.all([this.initialBlobsAcked(), this.#blobs.whenAcked([...newRoots, summaryId, archiveId])]);
    await this.#takeSavedRoots();

    const previous = this.#summary;
    const base = this.#setup.base;
    this.#summary = {
      summary: summaryId,
      archive: archiveId,
      archives: [...(previous?.archives ?? base.summaryArchives), archiveId],
      selfSummaryCount: (previous?.selfSummaryCount ?? base.selfSummaryCount) + 1,
    };
    this.#noteContext(commit.contextTokens);
    this.#settledRoots = [this.#settledRoots[0] as Uint8Array, ...newRoots];
    const settled = this.#checkpoint(this.#settledRoots, []);
    this.#lastSettled = settled;
    return [
      interactionMessage({ case: "summary", value: create(agent.SummaryUpdateSchema, { summary: commit.summary }) }),
      interactionMessage({ case: "summaryCompleted", value: create(agent.SummaryCompletedUpdateSchema) }),
      checkpointMessage(settled),
    ];
  }

  /** The last settled checkpoint again (the success tail repeats it), if there is one. */
  repeatSettledFrame(): agent.AgentServerMessage | undefined {
    return this.#lastSettled === undefined ? undefined : checkpointMessage(this.#lastSettled);
  }

  /** Adds steps to the run's turn (when it has one); returns the new step blobs and the new turn blob. */
  #addSteps(stepBytes: readonly Uint8Array[]): Uint8Array[] {
    const steps = this.#stepIds(stepBytes);
    if (steps.length === 0) return [];
    this.#turnSteps = [...this.#turnSteps, ...steps];
    this.#turnId = this.#turnBlob(this.#turnSteps);
    return [...steps, this.#turnId];
  }

  /** The step blobs put (SET unless sent before); none when the run has no turn. */
  #stepIds(stepBytes: readonly Uint8Array[]): Uint8Array[] {
    if (this.#userMessageId === undefined) return [];
    return stepBytes.map((bytes) => this.#blobs.put(bytes));
  }

  /** The turn blob with these steps, put. */
  #turnBlob(stepIds: readonly Uint8Array[]): Uint8Array {
    if (this.#userMessageId === undefined) throw new Error("a turn blob without the turn's user message");
    return this.#blobs.put(turnBlob(this.#userMessageId, stepIds, this.#setup.turn?.requestId ?? ""));
  }

  #noteContext(contextTokens: bigint | undefined): void {
    if (contextTokens !== undefined) this.#usedTokens = Number(contextTokens);
  }

  /** A root of the next checkpoint: SET (once) and saved in the store (once); that checkpoint waits for the save. */
  #putRoot(bytes: Uint8Array): Uint8Array {
    const { id, saved } = this.#sendRoot(bytes);
    this.#rootsSaved.push(saved);
    return id;
  }

  #sendRoot(bytes: Uint8Array): { id: Uint8Array; saved: Promise<void> } {
    const id = this.#blobs.put(bytes);
    const key = blobKey(id);
    let saved = this.#rootSaves.get(key);
    if (saved === undefined) {
      saved = this.#setup.onNewRoot(bytes);
      this.#rootSaves.set(key, saved);
    }
    return { id, saved };
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
      readPaths: this.#readPaths,
      todos: this.#todoIds,
      usedTokens: this.#usedTokens,
      maxTokens: this.#setup.contextWindow,
      mode: this.#mode,
      plan: this.#planId,
      summary: this.#summary,
    });
    // The barrier: nothing goes out that references a blob the client has not confirmed.
    this.#blobs.assertAcked(referencedBlobIds(checkpoint));
    return checkpoint;
  }
}
