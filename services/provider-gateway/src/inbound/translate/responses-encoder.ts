/**
 * ModelEvents -> an OpenAI Responses answer. Streamed (each event with its
 * `event:` line and a sequence_number from 0): response.created and
 * response.in_progress, then output items one after another
 * (block-sequencer.ts): a message item with one output_text part per text
 * block (output_item.added, content_part.added, output_text.delta ...,
 * output_text.done, content_part.done, output_item.done), a reasoning item
 * per thinking block (its summary as reasoning_summary_* events; no
 * encrypted_content: the real replay state stays on the gateway, and the
 * item id carries the gateway's marker), a function_call item per tool call
 * (function_call_arguments.delta as the arguments stream, .done); then
 * response.completed with the full snapshot and usage, or
 * response.incomplete (max_output_tokens / content_filter). An error after the
 * first byte is an `error` event followed by response.failed. Collected: the
 * response object.
 */
import type { ModelEventBody, UsageInit } from "../../events.ts";
import { GATEWAY_REASONING_ID_PREFIX } from "../gateway-markers.ts";
import { sendError, sendJson, startSse } from "../http-answers.ts";
import { BlockSequencer, type WireBlock } from "./block-sequencer.ts";
import { sseEvent, tokenCount, type EncoderContext, type TurnEncoder, type TurnEnd } from "./turn-encoder.ts";

type OutputText = { type: "output_text"; text: string; annotations: never[]; logprobs: never[] };
type Item =
  | { type: "message"; id: string; status: string; role: "assistant"; content: OutputText[] }
  | { type: "reasoning"; id: string; summary: Array<{ type: "summary_text"; text: string }> }
  | { type: "function_call"; id: string; status: string; call_id: string; name: string; arguments: string };

export class ResponsesEncoder implements TurnEncoder {
  readonly #ctx: EncoderContext;
  readonly #sequencer: BlockSequencer;
  readonly #output: Item[] = [];
  /** The message item text parts go into, while no other item came between. */
  #message: Extract<Item, { type: "message" }> | undefined;
  #sequence = 0;
  #items = 0;

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
    const response = this.#snapshot("in_progress", undefined);
    this.#write("response.created", { response });
    this.#write("response.in_progress", { response });
  }

  event(event: ModelEventBody): void {
    this.#sequencer.event(event);
  }

  finish(end: TurnEnd): void {
    const { res } = this.#ctx;
    this.#sequencer.flush();
    this.#closeMessage();
    if (end.kind === "failed") {
      if (!this.#ctx.stream) {
        sendError(res, "openai-responses", end.error);
        return;
      }
      const code = end.error.code ?? "server_error";
      this.#write("error", { code, message: end.error.message, param: end.error.param ?? null });
      this.#write("response.failed", { response: { ...this.#snapshot("failed", end.usage), error: { code, message: end.error.message } } });
      res.end();
      return;
    }
    const incomplete = end.stop === "length" ? "max_output_tokens" : end.stop === "refusal" ? "content_filter" : undefined;
    const response = {
      ...this.#snapshot(incomplete === undefined ? "completed" : "incomplete", end.usage),
      ...(incomplete === undefined ? {} : { incomplete_details: { reason: incomplete } }),
    };
    if (!this.#ctx.stream) {
      sendJson(res, 200, response);
      return;
    }
    this.#write(incomplete === undefined ? "response.completed" : "response.incomplete", { response });
    res.end();
  }

  #open(block: WireBlock): void {
    if (block.kind === "text") {
      const message = this.#message ?? this.#addItem({ type: "message", id: this.#itemId("msg"), status: "in_progress", role: "assistant", content: [] });
      this.#message = message;
      const part: OutputText = { type: "output_text", text: "", annotations: [], logprobs: [] };
      message.content.push(part);
      this.#write("response.content_part.added", { item_id: message.id, output_index: this.#indexOf(message), content_index: message.content.length - 1, part });
      return;
    }
    this.#closeMessage();
    if (block.kind === "thinking") {
      const item = this.#addItem<Extract<Item, { type: "reasoning" }>>({ type: "reasoning", id: this.#itemId(GATEWAY_REASONING_ID_PREFIX.slice(0, -1)), summary: [] });
      item.summary.push({ type: "summary_text", text: "" });
      this.#write("response.reasoning_summary_part.added", { item_id: item.id, output_index: this.#indexOf(item), summary_index: 0, part: { type: "summary_text", text: "" } });
      return;
    }
    this.#addItem({ type: "function_call", id: this.#itemId("fc"), status: "in_progress", call_id: block.callId, name: block.name, arguments: "" });
  }

  #delta(text: string): void {
    const item = this.#current();
    if (item === undefined) return;
    const base = { item_id: item.id, output_index: this.#indexOf(item) };
    switch (item.type) {
      case "message": {
        const part = item.content.at(-1) as OutputText;
        part.text += text;
        this.#write("response.output_text.delta", { ...base, content_index: item.content.length - 1, delta: text, logprobs: [] });
        return;
      }
      case "reasoning": {
        const summary = item.summary[0] as { text: string };
        summary.text += text;
        this.#write("response.reasoning_summary_text.delta", { ...base, summary_index: 0, delta: text });
        return;
      }
      case "function_call":
        item.arguments += text;
        this.#write("response.function_call_arguments.delta", { ...base, delta: text });
        return;
      default: {
        const never: never = item;
        throw new Error(`unknown item ${JSON.stringify(never)}`);
      }
    }
  }

  #close(argumentsJson: string | undefined): void {
    const item = this.#current();
    if (item === undefined) return;
    const base = { item_id: item.id, output_index: this.#indexOf(item) };
    switch (item.type) {
      case "message": {
        const contentIndex = item.content.length - 1;
        const part = item.content[contentIndex] as OutputText;
        this.#write("response.output_text.done", { ...base, content_index: contentIndex, text: part.text, logprobs: [] });
        this.#write("response.content_part.done", { ...base, content_index: contentIndex, part });
        return;
      }
      case "reasoning": {
        const summary = item.summary[0] as { type: "summary_text"; text: string };
        this.#write("response.reasoning_summary_text.done", { ...base, summary_index: 0, text: summary.text });
        this.#write("response.reasoning_summary_part.done", { ...base, summary_index: 0, part: summary });
        this.#write("response.output_item.done", { output_index: base.output_index, item });
        return;
      }
      case "function_call":
        item.arguments = argumentsJson ?? item.arguments;
        item.status = "completed";
        this.#write("response.function_call_arguments.done", { ...base, arguments: item.arguments });
        this.#write("response.output_item.done", { output_index: base.output_index, item });
        return;
      default: {
        const never: never = item;
        throw new Error(`unknown item ${JSON.stringify(never)}`);
      }
    }
  }

  #closeMessage(): void {
    const message = this.#message;
    if (message === undefined) return;
    this.#message = undefined;
    message.status = "completed";
    this.#write("response.output_item.done", { output_index: this.#indexOf(message), item: message });
  }

  #addItem<T extends Item>(item: T): T {
    this.#output.push(item);
    this.#write("response.output_item.added", { output_index: this.#output.length - 1, item: item.type === "reasoning" ? { ...item, summary: [] } : { ...item, ...(item.type === "message" ? { content: [] } : {}) } });
    return item;
  }

  #current(): Item | undefined {
    return this.#output.at(-1);
  }

  #indexOf(item: Item): number {
    return this.#output.indexOf(item);
  }

  #itemId(prefix: string): string {
    return `${prefix}_${this.#ctx.id}${(this.#items++).toString(16).padStart(4, "0")}`;
  }

  #snapshot(status: string, usage: UsageInit | undefined): Record<string, unknown> {
    return {
      id: `resp_${this.#ctx.id}`,
      object: "response",
      created_at: this.#ctx.created,
      status,
      model: this.#ctx.model,
      output: this.#output,
      parallel_tool_calls: true,
      tool_choice: "auto",
      tools: [],
      error: null,
      incomplete_details: null,
      usage: responsesUsage(usage) ?? null,
    };
  }

  #write(type: string, data: Record<string, unknown>): void {
    if (!this.#ctx.stream) return;
    this.#ctx.res.write(sseEvent(type, { type, sequence_number: this.#sequence++, ...data }));
  }
}

/** Responses usage from the neutral figures (input_tokens = the whole prompt). */
export function responsesUsage(usage: UsageInit | undefined): Record<string, unknown> | undefined {
  if (usage === undefined) return undefined;
  const input = tokenCount(usage.inputTokens) ?? 0;
  const output = tokenCount(usage.outputTokens) ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: tokenCount(usage.cacheReadTokens) ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: tokenCount(usage.reasoningTokens) ?? 0 },
    total_tokens: input + output,
  };
}
