/**
 * Responses SSE -> ModelEvents (provider-stream-semantics.md §2). Dispatch is
 * on the JSON `type`, never on `event:` lines or key order.
 * - Output items are keyed by output_index (item_id resolves to it):
 *   message text parts -> text blocks, reasoning summary parts and raw
 *   reasoning text -> thinking blocks, function_call items -> tool calls
 *   (arguments complete at `function_call_arguments.done` / `output_item.done`).
 * - Terminal: exactly one of response.completed (done; tool use when it has
 *   function calls), response.incomplete (LENGTH for the output limit,
 *   REFUSAL for the content filter, else INCOMPLETE), response.failed or an
 *   `error` event (PROVIDER_ERROR). The outcome is emitted at EOF; any event
 *   after the terminal is a protocol violation, a `[DONE]` line is ignored.
 * - The terminal snapshot `response.output` is authoritative: reasoning items
 *   for the replay state are taken from it, not from `output_item.added`.
 * - Usage: the terminal response's `usage`.
 * Unknown event and item types (hosted tools, annotations, ...) are ignored.
 */
import { ModelFailureKind, StopReason } from "@byok/contracts";
import { isContextOverflow } from "../../context-overflow.ts";
import { ProtocolViolation, type ModelEventWriter, type UsageInit } from "../../events.ts";
import type { Route } from "../../routes.ts";
import type { SseEvent } from "../../sse.ts";
import type { DecodeStep, StreamDecoder } from "../adapter.ts";
import { isRecord, numberField, parseEventPayload, recordField, stringField, tokens } from "../event-json.ts";
import { encodeReplay } from "../replay-codec.ts";
import type { LayoutSlot } from "../replay-layout.ts";
import type { ReasoningItem, ResponsesReplay, ResponsesTextMeta } from "./replay.ts";

type ItemState =
  | { kind: "message"; id: string | undefined; phase: string | undefined; textBlocks: number }
  | { kind: "function_call"; id: string | undefined; index: number; callId: string; ended: boolean }
  | { kind: "reasoning"; id: string | undefined; done: ReasoningItem | undefined }
  | { kind: "other"; id: string | undefined };

type Terminal = { kind: "completed" | "incomplete"; response: Record<string, unknown> };

export class ResponsesStreamDecoder implements StreamDecoder {
  readonly #writer: ModelEventWriter;
  readonly #route: Route;
  readonly #items = new Map<number, ItemState>();
  readonly #byId = new Map<string, number>();
  /** The text/thinking block being written: its part key and writer index. */
  #flow: { key: string; index: number } | undefined;
  readonly #closedFlows = new Set<string>();
  #refusal = "";
  #terminal: Terminal | undefined;

  constructor(writer: ModelEventWriter, route: Route) {
    this.#writer = writer;
    this.#route = route;
  }

  onEvent(event: SseEvent): DecodeStep {
    const payload = parseEventPayload(event);
    if (payload.kind === "done-marker") return "end";
    if (payload.kind === "cut") {
      this.#writer.fail(ModelFailureKind.TRUNCATED, "the stream was cut in the middle of an event", { retryable: true });
      return "end";
    }
    const data = payload.value;
    const type = stringField(data, "type");
    if (this.#terminal !== undefined) throw new ProtocolViolation(`${type ?? "an event"} after ${this.#terminal.kind === "completed" ? "response.completed" : "response.incomplete"}`);
    switch (type) {
      case "response.output_item.added":
        this.#itemAdded(data);
        break;
      case "response.output_item.done":
        this.#itemDone(data);
        break;
      case "response.output_text.delta":
        this.#textDelta(data);
        break;
      case "response.output_text.done":
      case "response.content_part.done":
        this.#closeFlow(`${this.#outputIndex(data)}:c${contentIndex(data)}`);
        break;
      case "response.refusal.delta":
        this.#refusal += stringField(data, "delta") ?? "";
        break;
      case "response.function_call_arguments.delta":
        this.#argsDelta(data);
        break;
      case "response.function_call_arguments.done":
        this.#argsDone(data);
        break;
      case "response.reasoning_summary_text.delta":
        this.#thinkingDelta(data, `s${numberField(data, "summary_index") ?? 0}`);
        break;
      case "response.reasoning_summary_text.done":
      case "response.reasoning_summary_part.done":
        this.#closeFlow(`${this.#outputIndex(data)}:s${numberField(data, "summary_index") ?? 0}`);
        break;
      case "response.reasoning_text.delta":
        this.#thinkingDelta(data, `r${contentIndex(data)}`);
        break;
      case "response.reasoning_text.done":
        this.#closeFlow(`${this.#outputIndex(data)}:r${contentIndex(data)}`);
        break;
      case "error":
        this.#error(data);
        return "end";
      case "response.failed":
        this.#failed(data);
        return "end";
      case "response.completed":
      case "response.incomplete":
        this.#terminalEvent(type === "response.completed" ? "completed" : "incomplete", data);
        break;
      default:
        // response.created / in_progress / queued, content_part.added, annotations, hosted tools, ...
        break;
    }
    return "continue";
  }

  onEnd(): void {
    if (this.#writer.finished) return;
    const terminal = this.#terminal;
    if (terminal === undefined) {
      this.#writer.fail(ModelFailureKind.TRUNCATED, "the stream ended without response.completed, response.incomplete or response.failed", { retryable: true });
      return;
    }
    const usageRecord = recordField(terminal.response, "usage");
    const usage = usageRecord === undefined ? undefined : responsesUsage(usageRecord);
    this.#writer.noteUsage(usage);
    if (terminal.kind === "incomplete") {
      const reason = stringField(recordField(terminal.response, "incomplete_details") ?? {}, "reason") ?? "unknown";
      if (/max/i.test(reason)) this.#writer.fail(ModelFailureKind.LENGTH, `the output limit was reached (incomplete: ${reason})`);
      else if (/content_filter/i.test(reason)) this.#writer.fail(ModelFailureKind.REFUSAL, `the endpoint's content filter stopped the answer (incomplete: ${reason})`);
      else this.#writer.fail(ModelFailureKind.INCOMPLETE, `the response is incomplete (${reason})`);
      return;
    }
    if (this.#refusal !== "") {
      this.#writer.fail(ModelFailureKind.REFUSAL, `the model refused: ${this.#refusal}`);
      return;
    }
    const calls = [...this.#items.values()].filter((i) => i.kind === "function_call").length;
    const replay: ResponsesReplay = { v: 1, layout: this.#layout(terminal.response) };
    this.#writer.complete(calls > 0 ? StopReason.TOOL_USE : StopReason.STOP, encodeReplay(this.#route, replay), usage);
  }

  #itemAdded(data: Record<string, unknown>): void {
    const outputIndex = requiredIndex(data, "output_index");
    const item = recordField(data, "item");
    if (item === undefined) throw new ProtocolViolation("output_item.added without an item");
    if (this.#items.has(outputIndex)) throw new ProtocolViolation(`output item ${outputIndex} added twice`);
    const id = stringField(item, "id");
    let state: ItemState;
    switch (stringField(item, "type")) {
      case "message":
        state = { kind: "message", id, phase: stringField(item, "phase"), textBlocks: 0 };
        break;
      case "function_call": {
        const callId = stringField(item, "call_id") ?? "";
        const index = this.#writer.beginToolCall(callId, stringField(item, "name") ?? "");
        this.#flow = undefined;
        state = { kind: "function_call", id, index, callId, ended: false };
        const args = stringField(item, "arguments");
        if (args !== undefined && args !== "") this.#writer.toolArgsDelta(index, args);
        break;
      }
      case "reasoning":
        state = { kind: "reasoning", id, done: undefined };
        break;
      default:
        state = { kind: "other", id };
    }
    this.#items.set(outputIndex, state);
    if (id !== undefined) this.#byId.set(id, outputIndex);
  }

  #itemDone(data: Record<string, unknown>): void {
    const outputIndex = this.#outputIndex(data);
    const state = this.#items.get(outputIndex);
    const item = recordField(data, "item");
    if (state === undefined) throw new ProtocolViolation(`output_item.done for unknown item ${outputIndex}`);
    if (this.#flow?.key.startsWith(`${outputIndex}:`)) this.#closeFlow(this.#flow.key);
    if (state.kind === "function_call" && !state.ended) {
      this.#writer.endToolCall(state.index, item === undefined ? undefined : stringField(item, "arguments"));
      state.ended = true;
    } else if (state.kind === "reasoning" && item !== undefined) {
      state.done = item;
    } else if (state.kind === "message" && item !== undefined) {
      state.phase = stringField(item, "phase") ?? state.phase;
    }
  }

  #textDelta(data: Record<string, unknown>): void {
    const outputIndex = this.#outputIndex(data);
    const state = this.#items.get(outputIndex);
    if (state?.kind !== "message") throw new ProtocolViolation(`output_text.delta for item ${outputIndex}, which is not a message`);
    const delta = stringField(data, "delta") ?? "";
    if (delta === "") return;
    const key = `${outputIndex}:c${contentIndex(data)}`;
    if (this.#flow?.key !== key) {
      if (this.#closedFlows.has(key)) throw new ProtocolViolation(`text delta for content part ${key} after it was done`);
      this.#flow = { key, index: this.#writer.beginText() };
      state.textBlocks++;
    }
    this.#writer.textDelta(this.#flow.index, delta);
  }

  #thinkingDelta(data: Record<string, unknown>, part: string): void {
    const outputIndex = this.#outputIndex(data);
    const state = this.#items.get(outputIndex);
    if (state?.kind !== "reasoning") throw new ProtocolViolation(`reasoning delta for item ${outputIndex}, which is not a reasoning item`);
    const delta = stringField(data, "delta") ?? "";
    if (delta === "") return;
    const key = `${outputIndex}:${part}`;
    if (this.#flow?.key !== key) {
      if (this.#closedFlows.has(key)) throw new ProtocolViolation(`reasoning delta for part ${key} after it was done`);
      this.#flow = { key, index: this.#writer.beginThinking() };
    }
    this.#writer.thinkingDelta(this.#flow.index, delta);
  }

  #closeFlow(key: string): void {
    this.#closedFlows.add(key);
    if (this.#flow?.key !== key) return;
    this.#writer.endBlock(this.#flow.index);
    this.#flow = undefined;
  }

  #argsDelta(data: Record<string, unknown>): void {
    const state = this.#call(data);
    this.#writer.toolArgsDelta(state.index, stringField(data, "delta") ?? "");
  }

  #argsDone(data: Record<string, unknown>): void {
    const state = this.#call(data);
    this.#writer.endToolCall(state.index, stringField(data, "arguments"));
    state.ended = true;
  }

  #call(data: Record<string, unknown>): Extract<ItemState, { kind: "function_call" }> {
    const outputIndex = this.#outputIndex(data);
    const state = this.#items.get(outputIndex);
    if (state?.kind !== "function_call") throw new ProtocolViolation(`function call event for item ${outputIndex}, which is not a function call`);
    if (state.ended) throw new ProtocolViolation(`function call event for item ${outputIndex} after its arguments were done`);
    return state;
  }

  #terminalEvent(kind: Terminal["kind"], data: Record<string, unknown>): void {
    const response = recordField(data, "response");
    if (response === undefined) throw new ProtocolViolation(`response.${kind} without a response`);
    this.#terminal = { kind, response };
    if (kind === "incomplete") return;
    if (stringField(response, "status") !== undefined && stringField(response, "status") !== "completed")
      throw new ProtocolViolation(`response.completed with status ${stringField(response, "status")}`);
    this.#writer.closeFlowBlocks();
    this.#flow = undefined;
    // Calls whose arguments never got a .done event end with the snapshot's arguments.
    const snapshot = snapshotItems(response);
    for (const [outputIndex, state] of this.#items) {
      if (state.kind !== "function_call" || state.ended) continue;
      const item = snapshot.find((i) => stringField(i, "call_id") === state.callId) ?? snapshot[outputIndex];
      this.#writer.endToolCall(state.index, item === undefined ? undefined : stringField(item, "arguments"));
      state.ended = true;
    }
    for (const item of snapshot) {
      const callId = stringField(item, "call_id");
      if (stringField(item, "type") === "function_call" && ![...this.#items.values()].some((s) => s.kind === "function_call" && s.callId === callId))
        throw new ProtocolViolation(`function call ${callId ?? "?"} appears only in the final snapshot`);
    }
  }

  #error(data: Record<string, unknown>): void {
    const inner = recordField(data, "error") ?? data;
    const message = stringField(inner, "message") ?? stringField(data, "message") ?? "no message";
    const code = stringField(inner, "code") ?? stringField(inner, "type") ?? stringField(data, "code");
    const kind = isContextOverflow("openai-responses", { code, message }) ? ModelFailureKind.CONTEXT_OVERFLOW : ModelFailureKind.PROVIDER_ERROR;
    this.#writer.fail(kind, `the endpoint reported an error in the stream: ${message}`, code === undefined ? {} : { providerCode: code });
  }

  #failed(data: Record<string, unknown>): void {
    const response = recordField(data, "response");
    const error = recordField(response, "error");
    const usage = recordField(response, "usage");
    if (usage !== undefined) this.#writer.noteUsage(responsesUsage(usage));
    const code = error === undefined ? undefined : stringField(error, "code");
    const message = error === undefined ? undefined : stringField(error, "message");
    this.#writer.fail(
      isContextOverflow("openai-responses", { code, message }) ? ModelFailureKind.CONTEXT_OVERFLOW : ModelFailureKind.PROVIDER_ERROR,
      `the response failed: ${message ?? "no message"}`,
      code === undefined ? {} : { providerCode: code },
    );
  }

  /** Replay layout from the terminal snapshot (the stream's own items when the snapshot lists none). */
  #layout(response: Record<string, unknown>): Array<LayoutSlot<ReasoningItem, ResponsesTextMeta>> {
    const layout: Array<LayoutSlot<ReasoningItem, ResponsesTextMeta>> = [];
    const snapshot = snapshotItems(response);
    const ordered: Array<{ state: ItemState; item: Record<string, unknown> | undefined }> =
      snapshot.length > 0
        ? snapshot.map((item, position) => {
            const id = stringField(item, "id");
            const outputIndex = id !== undefined && this.#byId.has(id) ? (this.#byId.get(id) as number) : position;
            return { state: this.#items.get(outputIndex) ?? { kind: "other", id }, item };
          })
        : [...this.#items.entries()].sort(([a], [b]) => a - b).map(([, state]) => ({ state, item: undefined }));
    let message = 0;
    for (const { state, item } of ordered) {
      switch (state.kind) {
        case "reasoning": {
          const verbatim = item !== undefined && stringField(item, "type") === "reasoning" ? item : state.done;
          if (verbatim !== undefined) layout.push({ kind: "opaque", value: verbatim });
          break;
        }
        case "message": {
          for (let i = 0; i < state.textBlocks; i++) layout.push({ kind: "text", meta: { message, ...(state.phase === undefined ? {} : { phase: state.phase }) } });
          message++;
          break;
        }
        case "function_call":
          layout.push({ kind: "tool_call", callId: state.callId });
          break;
        case "other":
          break;
        default: {
          const never: never = state;
          throw new Error(`unknown item state ${JSON.stringify(never)}`);
        }
      }
    }
    return layout;
  }

  #outputIndex(data: Record<string, unknown>): number {
    const index = numberField(data, "output_index");
    if (index !== undefined) return index;
    const id = stringField(data, "item_id");
    const byId = id === undefined ? undefined : this.#byId.get(id);
    if (byId === undefined) throw new ProtocolViolation(`${stringField(data, "type") ?? "event"} names no known output item`);
    return byId;
  }
}

function snapshotItems(response: Record<string, unknown>): Array<Record<string, unknown>> {
  const output = response["output"];
  return Array.isArray(output) ? output.filter(isRecord) : [];
}

function contentIndex(data: Record<string, unknown>): number {
  return numberField(data, "content_index") ?? 0;
}

function requiredIndex(data: Record<string, unknown>, key: string): number {
  const value = numberField(data, key);
  if (value === undefined || !Number.isInteger(value)) throw new ProtocolViolation(`${stringField(data, "type") ?? "event"} without ${key}`);
  return value;
}

/** Responses usage as reported: input_tokens already include cached tokens. */
export function responsesUsage(usage: Record<string, unknown>): UsageInit {
  const input = recordField(usage, "input_tokens_details");
  const output = recordField(usage, "output_tokens_details");
  return {
    inputTokens: tokens(numberField(usage, "input_tokens")),
    outputTokens: tokens(numberField(usage, "output_tokens")),
    cacheReadTokens: tokens(numberField(input, "cached_tokens")),
    cacheWriteTokens: tokens(numberField(input, "cache_write_tokens")),
    reasoningTokens: tokens(numberField(output, "reasoning_tokens")),
  };
}
