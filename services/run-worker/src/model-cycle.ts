/**
 * ModelCycle: the strict state machine over the ModelEvents of one model call
 * (design/ARCHITECTURE.md §5.3). It accepts exactly one well-formed stream:
 * start first and once; text / thinking / tool-call blocks opened, filled and
 * closed per index; at most one replay and one usage; exactly one terminal
 * (done or failure). Anything else ends the cycle as a protocol failure.
 *
 * A completed cycle yields the assistant message (parts in block-index order,
 * plus the opaque replay state); a failed one yields only diagnostics: partial
 * text never becomes history. Pure: no I/O, no clocks.
 */
import { create } from "@bufbuild/protobuf";
import {
  AssistantMessageSchema,
  ContentPartSchema,
  ModelFailureKind,
  StopReason,
  type AssistantMessage,
  type ClientEvent,
  type ContentPart,
  type ModelEvent,
  type ModelFailure,
  type ReplayState,
  type ToolCallPart,
  ToolCallPartSchema,
  type Usage,
} from "@byok/contracts";
import { assertNever } from "./assert-never.ts";

/** Who detected the failure: the gateway reported it, or the stream broke the cycle's rules. */
export type CycleFailureOrigin = "provider" | "protocol";

export interface CycleFailure {
  readonly origin: CycleFailureOrigin;
  readonly kind: ModelFailureKind;
  readonly message: string;
  readonly retryable: boolean;
  /** Diagnostics and UI closing only; never appended. */
  readonly partialText: string;
  readonly partialReasoning: string;
  /** Usage the provider reported before the failure, if any. */
  readonly usage: Usage | undefined;
}

export type StopKind = "stop" | "tool_use";

export type CycleOutcome =
  | {
      readonly kind: "completed";
      readonly assistant: AssistantMessage;
      readonly toolCalls: readonly ToolCallPart[];
      readonly usage: Usage | undefined;
      readonly stop: StopKind;
    }
  | { readonly kind: "failed"; readonly failure: CycleFailure };

/** The part of a ModelEvent the client sees (deltas are UI only). */
export type ForwardedEvent = Exclude<ClientEvent["event"], { case: undefined }>;

export type CycleStep =
  | { readonly kind: "accepted"; readonly forward: ForwardedEvent | undefined }
  | { readonly kind: "ended"; readonly outcome: CycleOutcome };

type TextBlock = { kind: "text" | "thinking"; open: boolean; chunks: string[] };
type ToolBlock = { kind: "tool"; open: boolean; callId: string; name: string; argumentsJson: string | undefined };
type Block = TextBlock | ToolBlock;

export class ModelCycle {
  #started = false;
  readonly #blocks = new Map<number, Block>();
  readonly #callIds = new Set<string>();
  #replay: ReplayState | undefined;
  #usage: Usage | undefined;
  #ended: CycleOutcome | undefined;

  /** The outcome once the cycle ended, else undefined. */
  get outcome(): CycleOutcome | undefined {
    return this.#ended;
  }

  push(event: ModelEvent): CycleStep {
    if (this.#ended !== undefined) {
      // Whatever the cycle reported before, a stream that keeps going after its
      // terminal is broken: the caller must not trust the earlier result.
      const outcome = this.#failure("protocol", ModelFailureKind.PROTOCOL, `${describe(event)} after the terminal event`);
      this.#ended = outcome;
      return { kind: "ended", outcome };
    }
    const e = event.event;
    switch (e.case) {
      case "keepalive":
        return accepted(undefined);
      case "failure":
        return this.#end(this.#providerFailure(e.value));
      case "start":
        if (this.#started) return this.#violation("duplicate start");
        this.#started = true;
        return accepted(undefined);
      case undefined:
        return this.#violation("event without a payload (unknown event type)");
      default:
        break;
    }
    if (!this.#started) return this.#violation(`${describe(event)} before start`);
    switch (e.case) {
      case "textStart":
      case "thinkingStart": {
        const kind = e.case === "textStart" ? "text" : "thinking";
        if (this.#blocks.has(e.value.index)) return this.#violation(`${describe(event)} reuses block index ${e.value.index}`);
        this.#blocks.set(e.value.index, { kind, open: true, chunks: [] });
        return accepted(e);
      }
      case "textDelta":
      case "thinkingDelta": {
        const block = this.#openBlock(e.value.index, e.case === "textDelta" ? "text" : "thinking");
        if (typeof block === "string") return this.#violation(`${describe(event)}: ${block}`);
        block.chunks.push(e.value.text);
        return accepted(e);
      }
      case "textEnd":
      case "thinkingEnd": {
        const block = this.#openBlock(e.value.index, e.case === "textEnd" ? "text" : "thinking");
        if (typeof block === "string") return this.#violation(`${describe(event)}: ${block}`);
        block.open = false;
        return accepted(e);
      }
      case "toolCallStart": {
        const { index, callId, name } = e.value;
        if (this.#blocks.has(index)) return this.#violation(`tool_call_start reuses block index ${index}`);
        if (callId === "") return this.#violation(`tool_call_start at index ${index} has an empty call id`);
        if (name === "") return this.#violation(`tool_call_start at index ${index} has an empty tool name`);
        if (this.#callIds.has(callId)) return this.#violation(`tool_call_start repeats call id ${JSON.stringify(callId)}`);
        this.#callIds.add(callId);
        this.#blocks.set(index, { kind: "tool", open: true, callId, name, argumentsJson: undefined });
        return accepted(e);
      }
      case "toolCallArgsDelta": {
        const block = this.#openBlock(e.value.index, "tool");
        if (typeof block === "string") return this.#violation(`tool_call_args_delta: ${block}`);
        return accepted(e);
      }
      case "toolCallEnd": {
        const block = this.#openBlock(e.value.index, "tool");
        if (typeof block === "string") return this.#violation(`tool_call_end: ${block}`);
        if (!isCompleteJson(e.value.argumentsJson))
          return this.#violation(`tool_call_end at index ${e.value.index} carries arguments that are not complete JSON`);
        block.open = false;
        block.argumentsJson = e.value.argumentsJson;
        return accepted(e);
      }
      case "replay":
        if (this.#replay !== undefined) return this.#violation("second replay state");
        this.#replay = e.value;
        return accepted(undefined);
      case "usage":
        if (this.#usage !== undefined) return this.#violation("second usage");
        this.#usage = e.value;
        return accepted(e);
      case "done":
        return this.#done(e.value.reason);
      default:
        return assertNever(e, "model event");
    }
  }

  /**
   * End the cycle from outside the stream (idle timeout, transport error): a
   * failure with whatever partial output arrived so far.
   */
  abandon(origin: CycleFailureOrigin, kind: ModelFailureKind, message: string, retryable: boolean): CycleOutcome {
    if (this.#ended !== undefined) return this.#ended;
    const outcome = this.#failure(origin, kind, message, retryable);
    this.#ended = outcome;
    return outcome;
  }

  #done(reason: StopReason): CycleStep {
    for (const [index, block] of this.#blocks) {
      if (block.open) return this.#violation(`done while ${block.kind} block ${index} is still open`);
    }
    const parts: ContentPart[] = [];
    const toolCalls: ToolCallPart[] = [];
    for (const index of [...this.#blocks.keys()].sort((a, b) => a - b)) {
      const block = this.#blocks.get(index) as Block;
      if (block.kind === "tool") {
        const call = create(ToolCallPartSchema, { callId: block.callId, name: block.name, argumentsJson: block.argumentsJson ?? "{}" });
        toolCalls.push(call);
        parts.push(create(ContentPartSchema, { part: { case: "toolCall", value: call } }));
        continue;
      }
      // An empty text or thinking block carries nothing the model said.
      const text = block.chunks.join("");
      if (text === "") continue;
      parts.push(
        create(ContentPartSchema, {
          part: block.kind === "text" ? { case: "text", value: { text } } : { case: "reasoning", value: { text } },
        }),
      );
    }
    let stop: StopKind;
    switch (reason) {
      case StopReason.STOP:
        if (toolCalls.length > 0) return this.#violation(`done(stop) with ${toolCalls.length} tool call(s)`);
        stop = "stop";
        break;
      case StopReason.TOOL_USE:
        if (toolCalls.length === 0) return this.#violation("done(tool_use) without any tool call");
        stop = "tool_use";
        break;
      default:
        return this.#violation(`done with stop reason ${reason}`);
    }
    const assistant = create(AssistantMessageSchema, { content: parts, ...(this.#replay === undefined ? {} : { replay: this.#replay }) });
    return this.#end({ kind: "completed", assistant, toolCalls, usage: this.#usage, stop });
  }

  #openBlock<K extends Block["kind"]>(index: number, kind: K): Extract<Block, { kind: K }> | string {
    const block = this.#blocks.get(index);
    if (block === undefined) return `unknown block index ${index}`;
    if (block.kind !== kind) return `block ${index} is a ${block.kind} block`;
    if (!block.open) return `block ${index} already ended`;
    return block as Extract<Block, { kind: K }>;
  }

  #providerFailure(failure: ModelFailure): CycleOutcome {
    const partialText = failure.partialText !== "" ? failure.partialText : this.#partial("text");
    return {
      kind: "failed",
      failure: {
        origin: "provider",
        kind: failure.kind,
        message: failure.message,
        retryable: failure.retryable,
        partialText,
        partialReasoning: this.#partial("thinking"),
        usage: this.#usage,
      },
    };
  }

  #violation(what: string): CycleStep {
    return this.#end(this.#failure("protocol", ModelFailureKind.PROTOCOL, `model stream protocol violation: ${what}`));
  }

  #failure(origin: CycleFailureOrigin, kind: ModelFailureKind, message: string, retryable = false): CycleOutcome {
    return {
      kind: "failed",
      failure: {
        origin,
        kind,
        message,
        retryable,
        partialText: this.#partial("text"),
        partialReasoning: this.#partial("thinking"),
        usage: this.#usage,
      },
    };
  }

  #partial(kind: "text" | "thinking"): string {
    const texts: string[] = [];
    for (const index of [...this.#blocks.keys()].sort((a, b) => a - b)) {
      const block = this.#blocks.get(index) as Block;
      if (block.kind === kind) texts.push(block.chunks.join(""));
    }
    return texts.join("");
  }

  #end(outcome: CycleOutcome): CycleStep {
    this.#ended = outcome;
    return { kind: "ended", outcome };
  }
}

function accepted(forward: ForwardedEvent | undefined): CycleStep {
  return { kind: "accepted", forward };
}

function describe(event: ModelEvent): string {
  return event.event.case === undefined ? "empty event" : event.event.case.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
