/**
 * ModelCycle: the strict state machine over the ModelEvents of one model call
 * (design/ARCHITECTURE.md §5.3). It accepts exactly one well-formed stream, as
 * the shared table of stream rules defines it (@byok/model-stream, the same
 * table the provider gateway's writer keeps): start first and once; text /
 * thinking / tool-call blocks opened, filled and closed per index; at most one
 * replay and one usage; exactly one terminal (done or failure). Anything else
 * ends the cycle as a protocol failure.
 *
 * A completed cycle yields the assistant message (parts in block-index order,
 * plus the opaque replay state); a failed one yields only diagnostics: partial
 * text never becomes history. Pure: no I/O, no clocks.
 */
import {
  ModelFailureKind,
  StopReason,
  type AssistantMessage,
  type ClientEvent,
  type ModelEvent,
  type ModelFailure,
  type ReplayState,
  type ToolCallPart,
  type Usage,
} from "@byok/contracts";
import { ModelStreamAssembly, ModelStreamChecker } from "@byok/model-stream";
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
  /** The endpoint's error code, or for OVER_LIMIT the limit that refused the call ("" = none). */
  readonly providerCode: string;
  /** OVER_LIMIT: ms until the limit may admit a call again (0 = unknown). */
  readonly retryAfterMs: number;
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

export class ModelCycle {
  readonly #rules = new ModelStreamChecker();
  readonly #assembly = new ModelStreamAssembly();
  #replay: ReplayState | undefined;
  #usage: Usage | undefined;
  #ended: CycleOutcome | undefined;

  /** The outcome once the cycle ended, else undefined. */
  get outcome(): CycleOutcome | undefined {
    return this.#ended;
  }

  push(event: ModelEvent): CycleStep {
    const e = event.event;
    // Whatever the cycle reported before, a stream that keeps going after its
    // terminal is broken: the rules refuse it, and the caller must not trust
    // the earlier result.
    const verdict = this.#rules.accept(e);
    if (verdict.kind === "violation") return this.#violation(verdict.message);
    this.#assembly.add(e);
    switch (e.case) {
      case "keepalive":
      case "start":
        return accepted(undefined);
      case "failure":
        return this.#end(this.#providerFailure(e.value));
      case "textStart":
      case "thinkingStart":
      case "textDelta":
      case "thinkingDelta":
      case "textEnd":
      case "thinkingEnd":
      case "toolCallStart":
      case "toolCallArgsDelta":
      case "toolCallEnd":
        return accepted(e);
      case "replay":
        this.#replay = e.value;
        return accepted(undefined);
      case "usage":
        this.#usage = e.value;
        return accepted(e);
      case "done":
        return this.#done(e.value.reason);
      case undefined:
        // The rules refuse an event without a payload; this keeps the switch exhaustive.
        return this.#violation("event without a payload (unknown event type)");
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
    this.#rules.abandon();
    const outcome = this.#failure(origin, kind, message, retryable);
    this.#ended = outcome;
    return outcome;
  }

  /** The rules accepted `done`: every block ended and the stop reason fits the tool calls. */
  #done(reason: StopReason): CycleStep {
    const { message: assistant, toolCalls } = this.#assembly.assistantMessage(this.#replay);
    const stop: StopKind = reason === StopReason.TOOL_USE ? "tool_use" : "stop";
    return this.#end({ kind: "completed", assistant, toolCalls, usage: this.#usage, stop });
  }

  #providerFailure(failure: ModelFailure): CycleOutcome {
    const partialText = failure.partialText !== "" ? failure.partialText : this.#assembly.partial("text");
    return {
      kind: "failed",
      failure: {
        origin: "provider",
        kind: failure.kind,
        message: failure.message,
        retryable: failure.retryable,
        partialText,
        partialReasoning: this.#assembly.partial("thinking"),
        usage: this.#usage,
        providerCode: failure.providerCode,
        retryAfterMs: failure.retryAfterMs,
      },
    };
  }

  #violation(what: string): CycleStep {
    this.#rules.abandon();
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
        partialText: this.#assembly.partial("text"),
        partialReasoning: this.#assembly.partial("thinking"),
        usage: this.#usage,
        providerCode: "",
        retryAfterMs: 0,
      },
    };
  }

  #end(outcome: CycleOutcome): CycleStep {
    this.#ended = outcome;
    return { kind: "ended", outcome };
  }
}

function accepted(forward: ForwardedEvent | undefined): CycleStep {
  return { kind: "accepted", forward };
}
