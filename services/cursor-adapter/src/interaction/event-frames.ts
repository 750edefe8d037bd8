/**
 * ClientEvents (the run owner's ephemeral UI stream) -> Cursor interaction
 * updates. Thinking blocks become thinking_delta* + thinking_completed{ms};
 * text becomes text_delta; usage becomes token_delta. A sequence gap (lost
 * events or a new owner) closes whatever UI block is open. Tool-call events are
 * ignored until tool rounds are mapped.
 */
import { create } from "@bufbuild/protobuf";
import type { ClientEvent } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { interactionMessage } from "./update-message.ts";

export interface EventFramesOptions {
  send(message: agent.AgentServerMessage): void;
  now(): number;
}

export class EventFrames {
  readonly #options: EventFramesOptions;
  #lastSeq = 0n;
  /** Open thinking blocks: block index -> start time. */
  readonly #openThinking = new Map<number, number>();
  #modelCallIndex: number | undefined;
  /** Thinking durations of the current model call, in block order. */
  #durations: number[] = [];

  constructor(options: EventFramesOptions) {
    this.#options = options;
  }

  accept(event: ClientEvent): void {
    if (event.seq !== this.#lastSeq + 1n) this.closeOpenBlocks();
    this.#lastSeq = event.seq;
    if (this.#modelCallIndex !== event.modelCallIndex) {
      this.closeOpenBlocks();
      this.#modelCallIndex = event.modelCallIndex;
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
      case "toolCallArgsDelta":
      case "toolCallEnd":
        this.closeOpenBlocks();
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
