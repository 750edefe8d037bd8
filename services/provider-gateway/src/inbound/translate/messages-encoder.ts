/**
 * ModelEvents -> an Anthropic Messages answer. Streamed (every event with
 * its `event:` line, which the Anthropic SDK requires): message_start, one
 * content block after another (block-sequencer.ts): text (text_delta),
 * thinking (thinking_delta, then a signature_delta with the gateway's marker:
 * the real replay state stays on the gateway), tool_use (input_json_delta as
 * the arguments stream); then message_delta with the stop reason (end_turn,
 * tool_use, max_tokens, refusal) and the usage, and message_stop. An error
 * after the first byte is an `error` event. Collected: one message object.
 *
 * Usage: input_tokens is the uncached part (the neutral figure minus cache
 * reads and writes), as Anthropic reports it; message_start carries zeros
 * (the figures come only at the end of a translated call), message_delta the
 * real values.
 */
import type { ModelEventBody, UsageInit } from "../../events.ts";
import { GATEWAY_THINKING_SIGNATURE } from "../gateway-markers.ts";
import { sendError, sendJson, startSse } from "../http-answers.ts";
import { inStreamError } from "../in-stream-error.ts";
import { BlockSequencer, type WireBlock } from "./block-sequencer.ts";
import { sseEvent, tokenCount, type EncoderContext, type TurnEncoder, type TurnEnd } from "./turn-encoder.ts";

const STOP_REASONS = { stop: "end_turn", tool_use: "tool_use", length: "max_tokens", refusal: "refusal" } as const;

type ContentBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown>; partial: string };

export class MessagesEncoder implements TurnEncoder {
  readonly #ctx: EncoderContext;
  readonly #blocks: ContentBlock[] = [];
  readonly #sequencer: BlockSequencer;

  constructor(ctx: EncoderContext) {
    this.#ctx = ctx;
    this.#sequencer = new BlockSequencer({
      open: (block) => this.#open(block),
      delta: (text) => this.#delta(text),
      close: (argumentsJson) => this.#close(argumentsJson),
    });
  }

  begin(): void {
    if (!this.#ctx.stream) return;
    startSse(this.#ctx.res);
    this.#write("message_start", {
      type: "message_start",
      message: { id: this.#id(), type: "message", role: "assistant", model: this.#ctx.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
    });
  }

  event(event: ModelEventBody): void {
    this.#sequencer.event(event);
  }

  finish(end: TurnEnd): void {
    const { res } = this.#ctx;
    this.#sequencer.flush();
    if (end.kind === "failed") {
      if (!this.#ctx.stream) sendError(res, "anthropic", end.error);
      else res.end(inStreamError("anthropic", end.error));
      return;
    }
    const stopReason = STOP_REASONS[end.stop];
    const usage = messagesUsage(end.usage);
    if (!this.#ctx.stream) {
      sendJson(res, 200, {
        id: this.#id(),
        type: "message",
        role: "assistant",
        model: this.#ctx.model,
        content: this.#blocks.map((b) => (b.type === "tool_use" ? { type: b.type, id: b.id, name: b.name, input: b.input } : b)),
        stop_reason: stopReason,
        stop_sequence: null,
        usage: usage ?? { input_tokens: 0, output_tokens: 0 },
      });
      return;
    }
    this.#write("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: usage ?? { output_tokens: 0 } });
    this.#write("message_stop", { type: "message_stop" });
    res.end();
  }

  #open(block: WireBlock): void {
    const content: ContentBlock =
      block.kind === "text"
        ? { type: "text", text: "" }
        : block.kind === "thinking"
          ? { type: "thinking", thinking: "", signature: "" }
          : { type: "tool_use", id: block.callId, name: block.name, input: {}, partial: "" };
    this.#blocks.push(content);
    const start = content.type === "tool_use" ? { type: "tool_use", id: content.id, name: content.name, input: {} } : content;
    this.#write("content_block_start", { type: "content_block_start", index: this.#blocks.length - 1, content_block: start });
  }

  #delta(text: string): void {
    const block = this.#blocks.at(-1);
    if (block === undefined) return;
    const index = this.#blocks.length - 1;
    switch (block.type) {
      case "text":
        block.text += text;
        this.#write("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } });
        return;
      case "thinking":
        block.thinking += text;
        this.#write("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: text } });
        return;
      case "tool_use":
        block.partial += text;
        this.#write("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: text } });
        return;
      default: {
        const never: never = block;
        throw new Error(`unknown block ${JSON.stringify(never)}`);
      }
    }
  }

  #close(argumentsJson: string | undefined): void {
    const block = this.#blocks.at(-1);
    if (block === undefined) return;
    const index = this.#blocks.length - 1;
    if (block.type === "thinking") {
      block.signature = GATEWAY_THINKING_SIGNATURE;
      this.#write("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: GATEWAY_THINKING_SIGNATURE } });
    } else if (block.type === "tool_use") {
      block.input = parseObject(argumentsJson ?? block.partial);
    }
    this.#write("content_block_stop", { type: "content_block_stop", index });
  }

  #write(name: string, data: unknown): void {
    if (this.#ctx.stream) this.#ctx.res.write(sseEvent(name, data));
  }

  #id(): string {
    return `msg_${this.#ctx.id}`;
  }
}

/** Anthropic usage from the neutral figures (input_tokens = the uncached part). */
export function messagesUsage(usage: UsageInit | undefined): Record<string, number> | undefined {
  if (usage === undefined) return undefined;
  const input = tokenCount(usage.inputTokens);
  const read = tokenCount(usage.cacheReadTokens);
  const write = tokenCount(usage.cacheWriteTokens);
  return {
    input_tokens: input === undefined ? 0 : Math.max(0, input - (read ?? 0) - (write ?? 0)),
    output_tokens: tokenCount(usage.outputTokens) ?? 0,
    ...(read === undefined ? {} : { cache_read_input_tokens: read }),
    ...(write === undefined ? {} : { cache_creation_input_tokens: write }),
  };
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === "" ? "{}" : text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
