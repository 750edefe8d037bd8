/**
 * ModelEventWriter: the one way adapters produce ModelEvents. It assigns block
 * indexes (0, 1, 2, ... in the order blocks start), closes an open text or
 * thinking block when the next block starts, sends `replay`, `usage`?, `done`
 * together on success and `usage`?, `failure` on failure, and keeps the text
 * deltas for the failure's partial_text (diagnostics only).
 *
 * Every event it would emit first passes its ModelEventGate: the stream rules
 * of @byok/model-stream (the table the run worker's ModelCycle reads streams
 * with). An event the rules refuse is never emitted: the writer throws a
 * ProtocolViolation instead, so a decoder fed a broken endpoint stream ends
 * the call with a PROTOCOL failure rather than a bad stream.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { StopReason, type ModelEventSchema, type ModelFailureKind, type UsageSchema } from "@byok/contracts";
import { ModelStreamChecker, type BlockKind } from "@byok/model-stream";

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
  /** When the endpoint said (Retry-After) the call may be tried again. */
  readonly retryAfterMs?: number | undefined;
}

/**
 * The writer's emission path: every event is checked against the stream
 * rules and emitted only when they accept it (else ProtocolViolation).
 */
export class ModelEventGate {
  readonly #emit: EmitModelEvent;
  readonly #rules = new ModelStreamChecker();

  constructor(emit: EmitModelEvent) {
    this.#emit = emit;
  }

  get started(): boolean {
    return this.#rules.started;
  }

  get ended(): boolean {
    return this.#rules.ended;
  }

  get blocksStarted(): number {
    return this.#rules.blocksStarted;
  }

  openBlock(index: number): BlockKind | undefined {
    return this.#rules.openBlock(index);
  }

  openBlocks(): ReadonlyArray<{ readonly index: number; readonly kind: BlockKind }> {
    return this.#rules.openBlocks();
  }

  /** Whether the rules would accept `event` now (nothing is emitted). */
  allows(event: ModelEventBody): boolean {
    return this.#rules.verdict(event).kind === "accepted";
  }

  /** Throw the ProtocolViolation the rules give for `event`, if any (nothing is emitted). */
  check(event: ModelEventBody): void {
    const verdict = this.#rules.verdict(event);
    if (verdict.kind === "violation") throw new ProtocolViolation(verdict.message);
  }

  send(event: ModelEventBody): void {
    const verdict = this.#rules.accept(event);
    if (verdict.kind === "violation") throw new ProtocolViolation(verdict.message);
    this.#emit(event);
  }
}

export class ModelEventWriter {
  readonly #gate: ModelEventGate;
  /** Argument deltas of the open tool calls. */
  readonly #toolArgs = new Map<number, string>();
  #usage: UsageInit | undefined;
  #partialText = "";

  constructor(emit: EmitModelEvent) {
    this.#gate = new ModelEventGate(emit);
  }

  get started(): boolean {
    return this.#gate.started;
  }

  get finished(): boolean {
    return this.#gate.ended;
  }

  /** Whether any content event (block or tool call) has been emitted. */
  get producedContent(): boolean {
    return this.#gate.blocksStarted > 0;
  }

  start(providerKind: string, routeId: string, upstreamModel: string): void {
    this.#gate.send({ case: "start", value: { providerKind, routeId, upstreamModel } });
  }

  beginText(): number {
    return this.#beginFlow("text");
  }

  beginThinking(): number {
    return this.#beginFlow("thinking");
  }

  textDelta(index: number, text: string): void {
    const event: ModelEventBody = { case: "textDelta", value: { index, text } };
    if (text === "") {
      this.#gate.check(event);
      return;
    }
    this.#gate.send(event);
    this.#partialText += text;
  }

  thinkingDelta(index: number, text: string): void {
    const event: ModelEventBody = { case: "thinkingDelta", value: { index, text } };
    if (text === "") this.#gate.check(event);
    else this.#gate.send(event);
  }

  /** End a text or thinking block. */
  endBlock(index: number): void {
    const kind = this.#gate.openBlock(index);
    if (kind !== "text" && kind !== "thinking") throw new ProtocolViolation(`end of unknown text/thinking block ${index}`);
    this.#gate.send(kind === "text" ? { case: "textEnd", value: { index } } : { case: "thinkingEnd", value: { index } });
  }

  beginToolCall(callId: string, name: string): number {
    const index = this.#gate.blocksStarted;
    const event: ModelEventBody = { case: "toolCallStart", value: { index, callId, name } };
    this.#gate.check(event);
    this.#closeFlowBlocks();
    this.#gate.send(event);
    this.#toolArgs.set(index, "");
    return index;
  }

  toolArgsDelta(index: number, delta: string): void {
    const event: ModelEventBody = { case: "toolCallArgsDelta", value: { index, delta } };
    if (delta === "") {
      this.#gate.check(event);
      return;
    }
    this.#gate.send(event);
    this.#toolArgs.set(index, (this.#toolArgs.get(index) ?? "") + delta);
  }

  /**
   * End a tool call. `finalArguments` is the endpoint's own complete argument
   * string when it sends one (Responses `.done`); otherwise the streamed
   * deltas are used. Either must be one complete JSON object ("" means "{}").
   */
  endToolCall(index: number, finalArguments?: string): void {
    const raw = finalArguments ?? this.#toolArgs.get(index) ?? "";
    const argumentsJson = raw.trim() === "" ? "{}" : raw;
    this.#gate.send({ case: "toolCallEnd", value: { index, argumentsJson } });
    this.#toolArgs.delete(index);
  }

  /** Close every open text/thinking block (the endpoint's terminal signal implies it). */
  closeFlowBlocks(): void {
    this.#closeFlowBlocks();
  }

  /** Successful end: replay state, usage (if reported), done. */
  complete(reason: StopReason.STOP | StopReason.TOOL_USE, replay: ReplayInit, usage: UsageInit | undefined): void {
    this.#closeFlowBlocks();
    // `done` is checked before anything is sent, so a refused completion leaves the stream open for fail().
    const done: ModelEventBody = { case: "done", value: { reason } };
    this.#gate.check(done);
    this.#gate.send({ case: "replay", value: { providerKind: replay.providerKind, routeId: replay.routeId, data: replay.data } });
    if (usage !== undefined) this.#gate.send({ case: "usage", value: usage });
    this.#gate.send(done);
  }

  /** Remember usage reported before a failure, so fail() can pass it on. */
  noteUsage(usage: UsageInit | undefined): void {
    this.#usage = usage;
  }

  /** Failed end: usage if the endpoint reported one (and the call started), then the failure. Ignored once finished. */
  fail(kind: ModelFailureKind, message: string, details: FailureDetails = {}): void {
    if (this.#gate.ended) return;
    if (this.#usage !== undefined) {
      const usage: ModelEventBody = { case: "usage", value: this.#usage };
      if (this.#gate.allows(usage)) this.#gate.send(usage);
    }
    this.#gate.send({
      case: "failure",
      value: {
        kind,
        message,
        partialText: this.#partialText,
        retryable: details.retryable ?? false,
        httpStatus: details.httpStatus ?? 0,
        providerCode: details.providerCode ?? "",
        retryAfterMs: details.retryAfterMs ?? 0,
      },
    });
  }

  #beginFlow(kind: "text" | "thinking"): number {
    this.#closeFlowBlocks();
    const index = this.#gate.blocksStarted;
    this.#gate.send(kind === "text" ? { case: "textStart", value: { index } } : { case: "thinkingStart", value: { index } });
    return index;
  }

  #closeFlowBlocks(): void {
    if (this.#gate.ended) return;
    for (const block of this.#gate.openBlocks()) {
      if (block.kind !== "tool") this.endBlock(block.index);
    }
  }
}
