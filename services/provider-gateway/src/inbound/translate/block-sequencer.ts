/**
 * For client formats whose blocks never overlap (Anthropic content blocks,
 * Responses output items): turns a ModelEvent stream, where tool calls may
 * stay open while later blocks run (chat routes end every tool call only at
 * finish_reason), into blocks one after another, without holding back what
 * can be sent.
 *
 * When a block starts while a tool call is on the wire: if the call's
 * arguments so far are one complete JSON object, the call is closed on the
 * wire at once (more argument text could only be whitespace, or would make
 * the call fail anyway) and the new block goes on; otherwise the new block
 * waits (its deltas kept) until the call ends. A tool call's end that carries
 * more than was streamed (Responses `.done`, empty arguments as "{}") sends
 * the rest as a last delta.
 */
import { isJsonObjectText } from "@byok/model-stream";
import type { ModelEventBody } from "../../events.ts";

export type WireBlock = { readonly kind: "text" } | { readonly kind: "thinking" } | { readonly kind: "tool"; readonly callId: string; readonly name: string };

export interface SequencedSink {
  open(block: WireBlock): void;
  /** Text, thinking or argument text of the open block. */
  delta(text: string): void;
  /** `argumentsJson`: a tool call's complete arguments. */
  close(argumentsJson: string | undefined): void;
}

interface Pending {
  readonly index: number;
  readonly block: WireBlock;
  readonly chunks: string[];
  ended: boolean;
  argumentsJson: string | undefined;
}

export class BlockSequencer {
  readonly #sink: SequencedSink;
  #current: { index: number; block: WireBlock; streamed: string } | undefined;
  readonly #queue: Pending[] = [];
  /** Tool calls closed on the wire before their end event. */
  readonly #closedEarly = new Set<number>();

  constructor(sink: SequencedSink) {
    this.#sink = sink;
  }

  event(event: ModelEventBody): void {
    switch (event.case) {
      case "textStart":
      case "thinkingStart":
        this.#start(event.value.index ?? 0, event.case === "textStart" ? { kind: "text" } : { kind: "thinking" });
        return;
      case "toolCallStart":
        this.#start(event.value.index ?? 0, { kind: "tool", callId: event.value.callId ?? "", name: event.value.name ?? "" });
        return;
      case "textDelta":
      case "thinkingDelta":
        this.#delta(event.value.index ?? 0, event.value.text ?? "");
        return;
      case "toolCallArgsDelta":
        this.#delta(event.value.index ?? 0, event.value.delta ?? "");
        return;
      case "textEnd":
      case "thinkingEnd":
        this.#end(event.value.index ?? 0, undefined);
        return;
      case "toolCallEnd":
        this.#end(event.value.index ?? 0, event.value.argumentsJson ?? "{}");
        return;
      default:
        return;
    }
  }

  /**
   * The stream ended: the block on the wire is closed, waiting blocks that
   * ended are sent, waiting tool calls that never ended are dropped (a call
   * cut by the output limit is never run).
   */
  flush(): void {
    if (this.#current !== undefined) {
      this.#sink.close(this.#current.block.kind === "tool" ? this.#current.streamed : undefined);
      this.#current = undefined;
    }
    for (const pending of this.#queue.splice(0)) {
      if (!pending.ended && pending.block.kind === "tool") continue;
      this.#sink.open(pending.block);
      for (const chunk of pending.chunks) this.#sink.delta(chunk);
      this.#closeWith(pending.block, pending.chunks.join(""), pending.argumentsJson);
    }
  }

  #start(index: number, block: WireBlock): void {
    const current = this.#current;
    if (current !== undefined && current.block.kind === "tool" && this.#queue.length === 0 && isJsonObjectText(current.streamed)) {
      this.#sink.close(current.streamed);
      this.#closedEarly.add(current.index);
      this.#current = undefined;
    }
    if (this.#current === undefined && this.#queue.length === 0) {
      this.#current = { index, block, streamed: "" };
      this.#sink.open(block);
      return;
    }
    this.#queue.push({ index, block, chunks: [], ended: false, argumentsJson: undefined });
  }

  #delta(index: number, text: string): void {
    if (text === "") return;
    if (this.#current?.index === index) {
      this.#current.streamed += text;
      this.#sink.delta(text);
      return;
    }
    this.#queue.find((p) => p.index === index)?.chunks.push(text);
    // A tool call closed early: only whitespace can follow (anything else fails the call).
  }

  #end(index: number, argumentsJson: string | undefined): void {
    if (this.#closedEarly.delete(index)) return;
    const current = this.#current;
    if (current?.index === index) {
      this.#closeWith(current.block, current.streamed, argumentsJson);
      this.#current = undefined;
      this.#promote();
      return;
    }
    const pending = this.#queue.find((p) => p.index === index);
    if (pending !== undefined) {
      pending.ended = true;
      pending.argumentsJson = argumentsJson;
    }
  }

  /** After the block on the wire ended: send waiting blocks until one is still open. */
  #promote(): void {
    while (this.#current === undefined) {
      const next = this.#queue.shift();
      if (next === undefined) return;
      this.#sink.open(next.block);
      for (const chunk of next.chunks) this.#sink.delta(chunk);
      const streamed = next.chunks.join("");
      if (next.ended) this.#closeWith(next.block, streamed, next.argumentsJson);
      else this.#current = { index: next.index, block: next.block, streamed };
    }
  }

  #closeWith(block: WireBlock, streamed: string, argumentsJson: string | undefined): void {
    if (block.kind === "tool" && argumentsJson !== undefined && argumentsJson !== streamed) {
      if (argumentsJson.startsWith(streamed)) this.#sink.delta(argumentsJson.slice(streamed.length));
    }
    this.#sink.close(block.kind === "tool" ? (argumentsJson ?? streamed) : undefined);
  }
}
