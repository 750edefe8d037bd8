/**
 * ClientEvents (the run owner's ephemeral UI stream) -> Cursor interaction
 * updates. Thinking blocks become thinking_delta* + thinking_completed{ms};
 * text becomes text_delta; usage becomes token_delta; tool-call events become
 * tool card placeholders (tool-call-frames.ts); compaction_started becomes
 * summary_started. A sequence gap (lost events or a new owner; ClientEventOrder
 * of @byok/run-client decides) closes whatever UI block is open.
 */
import { create } from "@bufbuild/protobuf";
import type { ClientEvent, ClientModelCallIndex } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { ClientEventOrder } from "@byok/run-client";
import { ToolCallFrames } from "./tool-call-frames.ts";
import { interactionMessage } from "./update-message.ts";

export interface EventFramesOptions {
  send(message: agent.AgentServerMessage): void;
  now(): number;
  /** True for the run's dynamic MCP tools (default: none). */
  isDynamicTool?(name: string): boolean;
  /** model_call_id of model call `index` on tool cards (default: the index as text). */
  modelCallIdOf?(modelCallIndex: ClientModelCallIndex): string;
}

export class EventFrames {
  readonly #options: EventFramesOptions;
  readonly #order = new ClientEventOrder();
  /** Open thinking blocks: block index -> start time. */
  readonly #openThinking = new Map<number, number>();
  /** Thinking durations of the current model call, in block order. */
  #durations: number[] = [];
  readonly toolCalls: ToolCallFrames;

  constructor(options: EventFramesOptions) {
    this.#options = options;
    this.toolCalls = new ToolCallFrames({
      send: (update) => this.#send(update),
      isDynamicTool: (name) => options.isDynamicTool?.(name) ?? false,
      modelCallIdOf: (index) => options.modelCallIdOf?.(index) ?? String(index),
    });
  }

  accept(event: ClientEvent): void {
    const { gap, newModelCall, modelCallIndex } = this.#order.accept(event);
    if (gap) {
      this.closeOpenBlocks();
      this.toolCalls.reset();
    }
    if (newModelCall) {
      this.closeOpenBlocks();
      this.toolCalls.reset();
      this.#durations = [];
    }
    const e = event.event;
    switch (e.case) {
      case "thinkingStart":
        this.#openThinking.set(e.value.index, this.#options.now());
        return;
      case "thinkingDelta":
        if (!this.#openThinking.has(e.value.index)) this.#openThinking.set(e.value.index, this.#options.now());
        if (e.value.text !== "") this.#send({ case: "thinkingDelta", value: create(agent.ThinkingDeltaUpdateSchema, { text: e.value.text, thinkingStyle: agent.ThinkingStyle.DEFAULT }) });
        return;
      case "thinkingEnd":
        this.#completeThinking(e.value.index);
        return;
      case "textStart":
      case "textEnd":
        this.closeOpenBlocks();
        return;
      case "textDelta":
        this.closeOpenBlocks();
        if (e.value.text !== "") this.#send({ case: "textDelta", value: create(agent.TextDeltaUpdateSchema, { text: e.value.text }) });
        return;
      case "usage": {
        const output = e.value.outputTokens;
        if (output !== undefined && output > 0n) this.#send({ case: "tokenDelta", value: create(agent.TokenDeltaUpdateSchema, { tokens: clampInt32(output) }) });
        return;
      }
      case "toolCallStart":
        this.closeOpenBlocks();
        this.toolCalls.start(modelCallIndex, e.value);
        return;
      case "toolCallArgsDelta":
        this.closeOpenBlocks();
        this.toolCalls.delta(e.value);
        return;
      case "toolCallEnd":
        this.closeOpenBlocks();
        this.toolCalls.end(e.value);
        return;
      case "compactionStarted":
        // The run owner summarizes the history now; the COMPACTED commit brings the summary and its end.
        this.closeOpenBlocks();
        this.#send({ case: "summaryStarted", value: create(agent.SummaryStartedUpdateSchema) });
        return;
      case "responseComplete":
        // Not UI: the session prepares the commit's blobs with it (ConversationProjection.prepareResponse).
        return;
      case undefined:
        return;
      default: {
        const unreachable: never = e;
        throw new Error(`unknown client event ${String(unreachable)}`);
      }
    }
  }

  /** Ends every open UI block (thinking) with its completion frame. */
  closeOpenBlocks(): void {
    // Called for every text and tool-argument delta: nothing to copy when no thinking block is open.
    if (this.#openThinking.size === 0) return;
    for (const index of [...this.#openThinking.keys()]) this.#completeThinking(index);
  }

  /** Thinking durations (ms) of the latest model call, in the order the blocks ended. */
  thinkingDurations(): readonly number[] {
    return this.#durations;
  }

  #completeThinking(index: number): void {
    const started = this.#openThinking.get(index);
    if (started === undefined) return;
    this.#openThinking.delete(index);
    const durationMs = Math.max(1, Math.round(this.#options.now() - started));
    this.#durations.push(durationMs);
    this.#send({ case: "thinkingCompleted", value: create(agent.ThinkingCompletedUpdateSchema, { thinkingDurationMs: durationMs }) });
  }

  #send(update: agent.InteractionUpdate["message"]): void {
    this.#options.send(interactionMessage(update));
  }
}

function clampInt32(value: bigint): number {
  return value > 2_147_483_647n ? 2_147_483_647 : Number(value);
}
