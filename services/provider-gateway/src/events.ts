/**
 * ModelEventWriter: the one way adapters produce ModelEvents. It assigns block
 * indexes, enforces the stream grammar of model.proto (ModelEvent) and turns
 * any misuse into a ProtocolViolation instead of a bad stream:
 * - text/thinking blocks never overlap each other (starting a block closes an
 *   open text/thinking block); tool calls may overlap;
 * - tool call ids are unique and non-empty; ToolCallEnd carries complete,
 *   valid JSON ("{}" for empty arguments);
 * - exactly one terminal: complete() (replay, usage?, done) or fail()
 *   (usage?, failure); nothing after it;
 * - Done(Stop) only without tool calls, Done(ToolUse) only with at least one,
 *   and only once every tool call has ended.
 * Text deltas are kept for the failure's partial_text (diagnostics only).
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { StopReason, type ModelEventSchema, type ModelFailureKind, type UsageSchema } from "@byok/contracts";

export type ModelEventBody = NonNullable<MessageInitShape<typeof ModelEventSchema>["event"]>;
export type EmitModelEvent = (event: ModelEventBody) => void;
export type UsageInit = MessageInitShape<typeof UsageSchema>;

/** Opaque replay state produced by an adapter for the assistant message of this call. */
export interface ReplayInit {
  readonly providerKind: string;
  readonly routeId: string;
  readonly data: Uint8Array;
}

/** The stream broke the endpoint's protocol or the ModelEvent grammar. */
export class ProtocolViolation extends Error {
  override readonly name = "ProtocolViolation";
}

export interface FailureDetails {
  readonly retryable?: boolean;
  readonly httpStatus?: number;
  readonly providerCode?: string;
}

type OpenBlock = { kind: "text" | "thinking" } | { kind: "tool"; callId: string; args: string };

export class ModelEventWriter {
  readonly #emit: EmitModelEvent;
  #started = false;
  #finished = false;
  #nextIndex = 0;
  readonly #open = new Map<number, OpenBlock>();
  readonly #callIds = new Set<string>();
  #toolCalls = 0;
  #usage: UsageInit | undefined;
  #partialText = "";

  constructor(emit: EmitModelEvent) {
    this.#emit = emit;
  }

  get started(): boolean {
    return this.#started;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** Whether any content event (block or tool call) has been emitted. */
  get producedContent(): boolean {
    return this.#nextIndex > 0;
  }

  start(providerKind: string, routeId: string, upstreamModel: string): void {
    this.#live();
    if (this.#started) throw new ProtocolViolation("duplicate start");
    this.#started = true;
    this.#emit({ case: "start", value: { providerKind, routeId, upstreamModel } });
  }

  beginText(): number {
    return this.#beginFlow("text");
  }

  beginThinking(): number {
    return this.#beginFlow("thinking");
  }

  textDelta(index: number, text: string): void {
    this.#flowBlock(index, "text");
    if (text === "") return;
    this.#partialText += text;
    this.#emit({ case: "textDelta", value: { index, text } });
  }

  thinkingDelta(index: number, text: string): void {
    this.#flowBlock(index, "thinking");
    if (text === "") return;
    this.#emit({ case: "thinkingDelta", value: { index, text } });
  }

  /** End a text or thinking block. */
  endBlock(index: number): void {
    const block = this.#open.get(index);
    if (block === undefined || block.kind === "tool") throw new ProtocolViolation(`end of unknown text/thinking block ${index}`);
    this.#open.delete(index);
    this.#emit(block.kind === "text" ? { case: "textEnd", value: { index } } : { case: "thinkingEnd", value: { index } });
  }

  beginToolCall(callId: string, name: string): number {
    this.#live();
    this.#requireStarted();
    if (callId === "") throw new ProtocolViolation("tool call without an id");
    if (name === "") throw new ProtocolViolation(`tool call ${callId} without a name`);
    if (this.#callIds.has(callId)) throw new ProtocolViolation(`duplicate tool call id ${callId}`);
    this.#closeFlowBlocks();
    this.#callIds.add(callId);
    this.#toolCalls++;
    const index = this.#nextIndex++;
    this.#open.set(index, { kind: "tool", callId, args: "" });
    this.#emit({ case: "toolCallStart", value: { index, callId, name } });
    return index;
  }

  toolArgsDelta(index: number, delta: string): void {
    const block = this.#toolBlock(index);
    if (delta === "") return;
    block.args += delta;
    this.#emit({ case: "toolCallArgsDelta", value: { index, delta } });
  }

  /**
   * End a tool call. `finalArguments` is the endpoint's own complete argument
   * string when it sends one (Responses `.done`); otherwise the streamed
   * deltas are used. Either must be complete JSON.
   */
  endToolCall(index: number, finalArguments?: string): void {
    const block = this.#toolBlock(index);
    const raw = finalArguments ?? block.args;
    const argumentsJson = raw.trim() === "" ? "{}" : raw;
    if (!isJsonObjectText(argumentsJson))
      throw new ProtocolViolation(`tool call ${block.callId}: arguments are not a complete JSON object`);
    this.#open.delete(index);
    this.#emit({ case: "toolCallEnd", value: { index, argumentsJson } });
  }

  /** Close every open text/thinking block (the endpoint's terminal signal implies it). */
  closeFlowBlocks(): void {
    this.#closeFlowBlocks();
  }

  /** Successful end: replay state, usage (if reported), done. */
  complete(reason: StopReason.STOP | StopReason.TOOL_USE, replay: ReplayInit, usage: UsageInit | undefined): void {
    this.#live();
    this.#requireStarted();
    this.#closeFlowBlocks();
    for (const [index, block] of this.#open) {
      if (block.kind === "tool") throw new ProtocolViolation(`tool call ${block.callId} (block ${index}) never ended`);
    }
    if (reason === StopReason.STOP && this.#toolCalls > 0) throw new ProtocolViolation(`stop with ${this.#toolCalls} tool call(s)`);
    if (reason === StopReason.TOOL_USE && this.#toolCalls === 0) throw new ProtocolViolation("tool use stop without any tool call");
    this.#finished = true;
    this.#emit({ case: "replay", value: { providerKind: replay.providerKind, routeId: replay.routeId, data: replay.data } });
    if (usage !== undefined) this.#emit({ case: "usage", value: usage });
    this.#emit({ case: "done", value: { reason } });
  }

  /** Remember usage reported before a failure, so fail() can pass it on. */
  noteUsage(usage: UsageInit | undefined): void {
    this.#usage = usage;
  }

  /** Failed end: usage if the endpoint reported one, then the failure. Ignored once finished. */
  fail(kind: ModelFailureKind, message: string, details: FailureDetails = {}): void {
    if (this.#finished) return;
    this.#finished = true;
    if (this.#usage !== undefined) this.#emit({ case: "usage", value: this.#usage });
    this.#emit({
      case: "failure",
      value: {
        kind,
        message,
        partialText: this.#partialText,
        retryable: details.retryable ?? false,
        httpStatus: details.httpStatus ?? 0,
        providerCode: details.providerCode ?? "",
      },
    });
  }

  #beginFlow(kind: "text" | "thinking"): number {
    this.#live();
    this.#requireStarted();
    this.#closeFlowBlocks();
    const index = this.#nextIndex++;
    this.#open.set(index, { kind });
    this.#emit(kind === "text" ? { case: "textStart", value: { index } } : { case: "thinkingStart", value: { index } });
    return index;
  }

  #closeFlowBlocks(): void {
    for (const [index, block] of [...this.#open]) {
      if (block.kind !== "tool") this.endBlock(index);
    }
  }

  #flowBlock(index: number, kind: "text" | "thinking"): void {
    this.#live();
    const block = this.#open.get(index);
    if (block === undefined || block.kind !== kind) throw new ProtocolViolation(`${kind} delta for block ${index}, which is not an open ${kind} block`);
  }

  #toolBlock(index: number): { kind: "tool"; callId: string; args: string } {
    this.#live();
    const block = this.#open.get(index);
    if (block === undefined || block.kind !== "tool") throw new ProtocolViolation(`tool call event for block ${index}, which is not an open tool call`);
    return block;
  }

  #requireStarted(): void {
    if (!this.#started) throw new ProtocolViolation("content before start");
  }

  #live(): void {
    if (this.#finished) throw new ProtocolViolation("event after the terminal event");
  }
}

/** True when `text` is exactly one complete JSON object (tool arguments are objects on every endpoint). */
export function isJsonObjectText(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
