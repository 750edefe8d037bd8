/**
 * Chat Completions SSE -> ModelEvents (provider-stream-semantics.md §1).
 * - Terminal signal: the choice's `finish_reason`. Tool calls end (and their
 *   arguments are validated) there; the outcome is emitted when the body
 *   ends (`[DONE]` or EOF), so the usage chunk that follows the finish chunk
 *   is included. No finish_reason before EOF = truncated.
 * - Reasoning (`reasoning_content`, Groq/OpenRouter `reasoning`) -> thinking
 *   blocks and the route's replay state; `content` -> text blocks.
 * - Tool call fragments are keyed by their slot `index`; the first fragment
 *   of a slot must carry id and name, repeats of the same id/name merge.
 * - `length` -> LENGTH, `content_filter` or a `refusal` -> REFUSAL, any
 *   payload with `error` -> PROVIDER_ERROR (even if [DONE] follows).
 * - Usage: the last non-empty `usage` of any chunk (choices or not).
 * Only choice 0 is requested; another choice index is a protocol violation.
 */
import { ModelFailureKind, StopReason } from "@byok/contracts";
import { ProtocolViolation, type ModelEventWriter, type UsageInit } from "../../events.ts";
import type { Route } from "../../routes.ts";
import type { SseEvent } from "../../sse.ts";
import { isContextOverflow } from "../../context-overflow.ts";
import { describeErrorBody } from "../../upstream-errors.ts";
import type { DecodeStep, StreamDecoder } from "../adapter.ts";
import { isRecord, numberField, parseEventPayload, recordField, stringField, tokens } from "../event-json.ts";
import { encodeReplay } from "../replay-codec.ts";
import type { ChatReasoningField, ChatReplay } from "./replay.ts";

interface ToolSlot {
  readonly index: number;
  readonly callId: string;
  readonly name: string;
}

export class ChatStreamDecoder implements StreamDecoder {
  readonly #writer: ModelEventWriter;
  readonly #route: Route;
  #text: number | undefined;
  #thinking: number | undefined;
  #reasoning: { field: ChatReasoningField; text: string } | undefined;
  readonly #tools = new Map<number, ToolSlot>();
  #finishReason: string | undefined;
  #refusal = "";
  #usage: Record<string, unknown> | undefined;

  constructor(writer: ModelEventWriter, route: Route) {
    this.#writer = writer;
    this.#route = route;
  }

  onEvent(event: SseEvent): DecodeStep {
    const payload = parseEventPayload(event);
    if (payload.kind === "done-marker") return "end";
    if (payload.kind === "cut") {
      this.#fail(ModelFailureKind.TRUNCATED, "the stream was cut in the middle of an event");
      return "end";
    }
    const chunk = payload.value;
    const usage = recordField(chunk, "usage");
    if (usage !== undefined && Object.keys(usage).length > 0) this.#usage = usage;
    if ((chunk["error"] !== undefined && chunk["error"] !== null) || event.event === "error") {
      const { message, code } = describeErrorBody(chunk);
      const kind = isContextOverflow("openai-chat", { code, message }) ? ModelFailureKind.CONTEXT_OVERFLOW : ModelFailureKind.PROVIDER_ERROR;
      this.#fail(kind, `the endpoint reported an error in the stream: ${message ?? "no message"}`, code);
      return "end";
    }
    const choices = chunk["choices"];
    if (choices === undefined || choices === null) return "continue";
    if (!Array.isArray(choices)) throw new ProtocolViolation("`choices` is not a list");
    for (const choice of choices) this.#choice(choice);
    return "continue";
  }

  onEnd(): void {
    if (this.#writer.finished) return;
    const usage = this.#usage === undefined ? undefined : chatUsage(this.#usage);
    this.#writer.noteUsage(usage);
    const reason = this.#finishReason;
    if (reason === undefined) {
      this.#writer.fail(ModelFailureKind.TRUNCATED, "the stream ended without a finish_reason", { retryable: true });
      return;
    }
    if (this.#refusal !== "") {
      this.#writer.fail(ModelFailureKind.REFUSAL, `the model refused: ${this.#refusal}`);
      return;
    }
    switch (reason) {
      case "stop":
      case "tool_calls":
      case "function_call": {
        const replay: ChatReplay = { v: 1, ...(this.#reasoning === undefined ? {} : { reasoning: this.#reasoning }) };
        this.#writer.complete(this.#tools.size > 0 ? StopReason.TOOL_USE : StopReason.STOP, encodeReplay(this.#route, replay), usage);
        return;
      }
      case "length":
        this.#writer.fail(ModelFailureKind.LENGTH, "the output limit was reached (finish_reason length)");
        return;
      case "content_filter":
        this.#writer.fail(ModelFailureKind.REFUSAL, "the endpoint's content filter stopped the answer (finish_reason content_filter)");
        return;
      default:
        this.#writer.fail(ModelFailureKind.INCOMPLETE, `unsupported finish_reason ${JSON.stringify(reason)}`);
    }
  }

  #choice(choice: unknown): void {
    if (!isRecord(choice)) throw new ProtocolViolation("a choice is not an object");
    if (choice["index"] !== undefined && choice["index"] !== 0) throw new ProtocolViolation(`unexpected choice index ${JSON.stringify(choice["index"])}`);
    const delta = recordField(choice, "delta");
    if (delta !== undefined) {
      if (this.#finishReason !== undefined && hasContent(delta)) throw new ProtocolViolation("content after finish_reason");
      this.#delta(delta);
    }
    const finish = stringField(choice, "finish_reason");
    if (finish !== undefined) this.#finish(finish);
  }

  #delta(delta: Record<string, unknown>): void {
    const reasoningContent = stringField(delta, "reasoning_content");
    const reasoning = reasoningContent ?? stringField(delta, "reasoning");
    if (reasoning !== undefined && reasoning !== "") {
      const field: ChatReasoningField = reasoningContent !== undefined ? "reasoning_content" : "reasoning";
      this.#reasoning ??= { field, text: "" };
      this.#reasoning.text += reasoning;
      if (this.#thinking === undefined) {
        this.#thinking = this.#writer.beginThinking();
        this.#text = undefined;
      }
      this.#writer.thinkingDelta(this.#thinking, reasoning);
    }
    const content = stringField(delta, "content");
    if (content !== undefined && content !== "") {
      if (this.#text === undefined) {
        this.#text = this.#writer.beginText();
        this.#thinking = undefined;
      }
      this.#writer.textDelta(this.#text, content);
    }
    const refusal = stringField(delta, "refusal");
    if (refusal !== undefined) this.#refusal += refusal;
    const toolCalls = delta["tool_calls"];
    if (toolCalls !== undefined && toolCalls !== null) {
      if (!Array.isArray(toolCalls)) throw new ProtocolViolation("`tool_calls` is not a list");
      for (const fragment of toolCalls) this.#toolFragment(fragment);
    }
  }

  #toolFragment(fragment: unknown): void {
    if (!isRecord(fragment)) throw new ProtocolViolation("a tool call fragment is not an object");
    const slot = fragment["index"];
    if (typeof slot !== "number" || !Number.isInteger(slot) || slot < 0) throw new ProtocolViolation("a tool call fragment without a valid index");
    const fn = recordField(fragment, "function");
    const id = stringField(fragment, "id");
    const name = fn === undefined ? undefined : stringField(fn, "name");
    let tool = this.#tools.get(slot);
    if (tool === undefined) {
      if (id === undefined || id === "" || name === undefined || name === "")
        throw new ProtocolViolation(`tool call slot ${slot} starts without an id and a name`);
      tool = { index: this.#writer.beginToolCall(id, name), callId: id, name };
      this.#tools.set(slot, tool);
      this.#text = undefined;
      this.#thinking = undefined;
    } else {
      if (id !== undefined && id !== "" && id !== tool.callId) throw new ProtocolViolation(`tool call slot ${slot} changes its id`);
      if (name !== undefined && name !== "" && name !== tool.name) throw new ProtocolViolation(`tool call slot ${slot} changes its name`);
    }
    const args = fn === undefined ? undefined : fn["arguments"];
    if (typeof args === "string") this.#writer.toolArgsDelta(tool.index, args);
    else if (args !== undefined && args !== null) throw new ProtocolViolation(`tool call slot ${slot}: arguments are not a string`);
  }

  #finish(reason: string): void {
    if (this.#finishReason !== undefined) {
      if (reason !== this.#finishReason) throw new ProtocolViolation(`finish_reason changed from ${this.#finishReason} to ${reason}`);
      return;
    }
    this.#finishReason = reason;
    if (reason !== "stop" && reason !== "tool_calls" && reason !== "function_call") return;
    this.#writer.closeFlowBlocks();
    this.#text = undefined;
    this.#thinking = undefined;
    for (const slot of [...this.#tools.keys()].sort((a, b) => a - b)) this.#writer.endToolCall((this.#tools.get(slot) as ToolSlot).index);
  }

  #fail(kind: ModelFailureKind, message: string, providerCode?: string): void {
    if (this.#usage !== undefined) this.#writer.noteUsage(chatUsage(this.#usage));
    this.#writer.fail(kind, message, { retryable: kind === ModelFailureKind.TRUNCATED, ...(providerCode === undefined ? {} : { providerCode }) });
  }
}

function hasContent(delta: Record<string, unknown>): boolean {
  const nonEmpty = (key: string): boolean => {
    const value = delta[key];
    return value !== undefined && value !== null && value !== "" && !(Array.isArray(value) && value.length === 0);
  };
  return nonEmpty("content") || nonEmpty("reasoning_content") || nonEmpty("reasoning") || nonEmpty("tool_calls") || nonEmpty("refusal");
}

/** Chat usage as reported: prompt_tokens already include cached tokens. */
export function chatUsage(usage: Record<string, unknown>): UsageInit {
  const prompt = recordField(usage, "prompt_tokens_details");
  const completion = recordField(usage, "completion_tokens_details");
  return {
    inputTokens: tokens(numberField(usage, "prompt_tokens")),
    outputTokens: tokens(numberField(usage, "completion_tokens")),
    cacheReadTokens: tokens(numberField(prompt, "cached_tokens") ?? numberField(usage, "prompt_cache_hit_tokens")),
    cacheWriteTokens: tokens(numberField(prompt, "cache_write_tokens")),
    reasoningTokens: tokens(numberField(completion, "reasoning_tokens")),
  };
}
