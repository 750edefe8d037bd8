/**
 * Anthropic Messages SSE -> ModelEvents (provider-stream-semantics.md §3).
 * Dispatch is on the JSON `type` (events without an `event:` line count too).
 * - message_start first and once; blocks never interleave (block i stops
 *   before block i+1 starts). text -> text block, thinking -> thinking block
 *   (+ its signature for replay), redacted_thinking -> replay only,
 *   tool_use -> tool call with arguments complete at its content_block_stop.
 *   Server-tool and other unknown blocks are ignored.
 * - Terminal: message_stop, with message_delta's stop_reason: end_turn /
 *   stop_sequence -> done(stop), tool_use -> done(tool use), max_tokens /
 *   model_context_window_exceeded -> LENGTH, refusal -> REFUSAL, pause_turn
 *   and unknown reasons -> INCOMPLETE. The outcome is emitted at EOF; events
 *   after message_stop are a protocol violation. An `error` event ->
 *   PROVIDER_ERROR (rate_limit_error -> RATE_LIMITED, authentication/permission
 *   -> AUTH); EOF before message_stop -> TRUNCATED.
 * - Usage: message_start's usage, overridden field by field by message_delta's.
 *   input_tokens reported = input + cache_creation + cache_read (whole prompt).
 */
import { ModelFailureKind, StopReason } from "@byok/contracts";
import { isContextOverflow } from "../../context-overflow.ts";
import { ProtocolViolation, type ModelEventWriter, type UsageInit } from "../../events.ts";
import type { Route } from "../../routes.ts";
import type { SseEvent } from "../../sse.ts";
import type { DecodeStep, StreamDecoder } from "../adapter.ts";
import { numberField, parseEventPayload, recordField, stringField, tokens } from "../event-json.ts";
import { encodeReplay } from "../replay-codec.ts";
import type { LayoutSlot } from "../replay-layout.ts";
import type { AnthropicReplay, ThinkingBlock } from "./replay.ts";

type Block =
  | { kind: "text"; index: number | undefined }
  | { kind: "thinking"; index: number; thinking: string; signature: string }
  | { kind: "redacted_thinking"; data: string }
  | { kind: "tool_use"; index: number; callId: string }
  | { kind: "other" };

export class AnthropicStreamDecoder implements StreamDecoder {
  readonly #writer: ModelEventWriter;
  readonly #route: Route;
  #started = false;
  /** Wire index and state of the block between content_block_start and _stop. */
  #open: { wireIndex: number; block: Block } | undefined;
  #lastWireIndex = -1;
  readonly #layout: Array<LayoutSlot<ThinkingBlock>> = [];
  #usage: Record<string, unknown> = {};
  #stopReason: string | undefined;
  #stopDetails: Record<string, unknown> | undefined;
  #stopped = false;

  constructor(writer: ModelEventWriter, route: Route) {
    this.#writer = writer;
    this.#route = route;
  }

  onEvent(event: SseEvent): DecodeStep {
    const payload = parseEventPayload(event);
    if (payload.kind === "done-marker") return "continue";
    if (payload.kind === "cut") {
      this.#fail(ModelFailureKind.TRUNCATED, "the stream was cut in the middle of an event", { retryable: true });
      return "end";
    }
    const data = payload.value;
    const type = stringField(data, "type");
    if (type === "ping") return "continue";
    if (this.#stopped) throw new ProtocolViolation(`${type ?? "an event"} after message_stop`);
    if (type === "error") {
      this.#error(data);
      return "end";
    }
    if (type !== "message_start" && !this.#started) throw new ProtocolViolation(`${type ?? "an event"} before message_start`);
    switch (type) {
      case "message_start": {
        if (this.#started) throw new ProtocolViolation("second message_start");
        this.#started = true;
        this.#usage = { ...(recordField(recordField(data, "message"), "usage") ?? {}) };
        break;
      }
      case "content_block_start":
        this.#blockStart(data);
        break;
      case "content_block_delta":
        this.#blockDelta(data);
        break;
      case "content_block_stop":
        this.#blockStop(data);
        break;
      case "message_delta": {
        const delta = recordField(data, "delta");
        const reason = delta === undefined ? undefined : stringField(delta, "stop_reason");
        if (reason !== undefined) this.#stopReason = reason;
        const details = recordField(delta, "stop_details");
        if (details !== undefined) this.#stopDetails = details;
        for (const [key, value] of Object.entries(recordField(data, "usage") ?? {})) {
          if (value !== null && value !== undefined) this.#usage[key] = value;
        }
        break;
      }
      case "message_stop":
        this.#stopped = true;
        break;
      default:
        // Newer event types pass.
        break;
    }
    return "continue";
  }

  onEnd(): void {
    if (this.#writer.finished) return;
    const usage = this.#started ? anthropicUsage(this.#usage) : undefined;
    this.#writer.noteUsage(usage);
    if (!this.#stopped) {
      this.#writer.fail(ModelFailureKind.TRUNCATED, "the stream ended without message_stop", { retryable: true });
      return;
    }
    const reason = this.#stopReason;
    switch (reason) {
      case "end_turn":
      case "stop_sequence":
      case "tool_use": {
        if (this.#open !== undefined) throw new ProtocolViolation(`block ${this.#open.wireIndex} never stopped`);
        const replay: AnthropicReplay = { v: 1, layout: this.#layout };
        this.#writer.complete(reason === "tool_use" ? StopReason.TOOL_USE : StopReason.STOP, encodeReplay(this.#route, replay), usage);
        return;
      }
      case "max_tokens":
      case "model_context_window_exceeded":
        this.#writer.fail(ModelFailureKind.LENGTH, `the output limit was reached (stop_reason ${reason})`);
        return;
      case "refusal": {
        const explanation = this.#stopDetails === undefined ? undefined : stringField(this.#stopDetails, "explanation");
        const category = this.#stopDetails === undefined ? undefined : stringField(this.#stopDetails, "category");
        this.#writer.fail(ModelFailureKind.REFUSAL, `the model refused${explanation === undefined ? "" : `: ${explanation}`}`, category === undefined ? {} : { providerCode: category });
        return;
      }
      case undefined:
        this.#writer.fail(ModelFailureKind.INCOMPLETE, "message_stop without a stop_reason");
        return;
      default:
        this.#writer.fail(ModelFailureKind.INCOMPLETE, `the turn stopped unfinished (stop_reason ${reason})`);
    }
  }

  #blockStart(data: Record<string, unknown>): void {
    const wireIndex = numberField(data, "index");
    if (wireIndex === undefined) throw new ProtocolViolation("content_block_start without an index");
    if (this.#open !== undefined) throw new ProtocolViolation(`block ${wireIndex} started while block ${this.#open.wireIndex} is open`);
    if (wireIndex <= this.#lastWireIndex) throw new ProtocolViolation(`block index ${wireIndex} reused`);
    this.#lastWireIndex = wireIndex;
    const start = recordField(data, "content_block") ?? {};
    let block: Block;
    switch (stringField(start, "type")) {
      case "text": {
        block = { kind: "text", index: undefined };
        this.#open = { wireIndex, block };
        this.#text(block, stringField(start, "text") ?? "");
        return;
      }
      case "thinking": {
        const index = this.#writer.beginThinking();
        block = { kind: "thinking", index, thinking: stringField(start, "thinking") ?? "", signature: stringField(start, "signature") ?? "" };
        this.#writer.thinkingDelta(index, block.thinking);
        break;
      }
      case "redacted_thinking":
        block = { kind: "redacted_thinking", data: stringField(start, "data") ?? "" };
        break;
      case "tool_use": {
        const callId = stringField(start, "id") ?? "";
        block = { kind: "tool_use", index: this.#writer.beginToolCall(callId, stringField(start, "name") ?? ""), callId };
        break;
      }
      default:
        block = { kind: "other" };
    }
    this.#open = { wireIndex, block };
  }

  #blockDelta(data: Record<string, unknown>): void {
    const block = this.#current(data, "content_block_delta");
    const delta = recordField(data, "delta") ?? {};
    const type = stringField(delta, "type");
    switch (type) {
      case "text_delta":
        if (block.kind !== "text") throw new ProtocolViolation(`text_delta in a ${block.kind} block`);
        this.#text(block, stringField(delta, "text") ?? "");
        return;
      case "thinking_delta": {
        if (block.kind !== "thinking") throw new ProtocolViolation(`thinking_delta in a ${block.kind} block`);
        const text = stringField(delta, "thinking") ?? "";
        block.thinking += text;
        this.#writer.thinkingDelta(block.index, text);
        return;
      }
      case "signature_delta":
        if (block.kind !== "thinking") throw new ProtocolViolation(`signature_delta in a ${block.kind} block`);
        block.signature += stringField(delta, "signature") ?? "";
        return;
      case "input_json_delta":
        if (block.kind === "other") return;
        if (block.kind !== "tool_use") throw new ProtocolViolation(`input_json_delta in a ${block.kind} block`);
        this.#writer.toolArgsDelta(block.index, stringField(delta, "partial_json") ?? "");
        return;
      default:
        // citations_delta and newer delta types carry nothing we forward.
        return;
    }
  }

  #blockStop(data: Record<string, unknown>): void {
    const block = this.#current(data, "content_block_stop");
    this.#open = undefined;
    switch (block.kind) {
      case "text":
        if (block.index !== undefined) {
          this.#writer.endBlock(block.index);
          this.#layout.push({ kind: "text" });
        }
        return;
      case "thinking":
        this.#writer.endBlock(block.index);
        this.#layout.push({ kind: "opaque", value: { type: "thinking", thinking: block.thinking, signature: block.signature } });
        return;
      case "redacted_thinking":
        this.#layout.push({ kind: "opaque", value: { type: "redacted_thinking", data: block.data } });
        return;
      case "tool_use":
        this.#writer.endToolCall(block.index);
        this.#layout.push({ kind: "tool_call", callId: block.callId });
        return;
      case "other":
        return;
      default: {
        const never: never = block;
        throw new Error(`unknown block ${JSON.stringify(never)}`);
      }
    }
  }

  #text(block: Extract<Block, { kind: "text" }>, text: string): void {
    if (text === "") return;
    block.index ??= this.#writer.beginText();
    this.#writer.textDelta(block.index, text);
  }

  #current(data: Record<string, unknown>, what: string): Block {
    const wireIndex = numberField(data, "index");
    if (this.#open === undefined || this.#open.wireIndex !== wireIndex) throw new ProtocolViolation(`${what} for block ${String(wireIndex)}, which is not open`);
    return this.#open.block;
  }

  #error(data: Record<string, unknown>): void {
    const error = recordField(data, "error") ?? {};
    const type = stringField(error, "type");
    const message = stringField(error, "message");
    const kind =
      type === "rate_limit_error"
        ? ModelFailureKind.RATE_LIMITED
        : type === "authentication_error" || type === "permission_error"
          ? ModelFailureKind.AUTH
          : isContextOverflow("anthropic", { code: type, message })
            ? ModelFailureKind.CONTEXT_OVERFLOW
            : ModelFailureKind.PROVIDER_ERROR;
    const retryable = type === "overloaded_error" || type === "api_error" || type === "rate_limit_error";
    this.#fail(kind, `the endpoint reported an error in the stream: ${message ?? "no message"}`, {
      retryable,
      ...(type === undefined ? {} : { providerCode: type }),
    });
  }

  #fail(kind: ModelFailureKind, message: string, details: { retryable?: boolean; providerCode?: string }): void {
    if (this.#started) this.#writer.noteUsage(anthropicUsage(this.#usage));
    this.#writer.fail(kind, message, details);
  }
}

/** Anthropic usage: input_tokens is the uncached part; we report the whole prompt. */
export function anthropicUsage(usage: Record<string, unknown>): UsageInit {
  const uncached = numberField(usage, "input_tokens");
  const cacheWrite = numberField(usage, "cache_creation_input_tokens");
  const cacheRead = numberField(usage, "cache_read_input_tokens");
  return {
    inputTokens: tokens(uncached === undefined ? undefined : uncached + (cacheWrite ?? 0) + (cacheRead ?? 0)),
    outputTokens: tokens(numberField(usage, "output_tokens")),
    cacheReadTokens: tokens(cacheRead),
    cacheWriteTokens: tokens(cacheWrite),
    reasoningTokens: tokens(numberField(recordField(usage, "output_tokens_details"), "thinking_tokens")),
  };
}
