/**
 * The rules of one model call's ModelEvent stream (proto/byok/v1/model.proto,
 * ModelEvent), written down once. The provider gateway's ModelEventWriter
 * never emits an event this table refuses, and the run worker's ModelCycle
 * fails a stream that breaks it; a conformance test runs the same sequences
 * through both.
 *
 * The table says, per event, where in the stream it may come and what it does:
 * - `start` comes first (only keepalives and a failure may come before it) and once;
 * - blocks (text, thinking, tool call) are opened, filled and closed by index,
 *   one index space for all kinds, an index is never reused; blocks come
 *   after start and before the replay state and usage;
 * - per block kind: a text or thinking block never overlaps another text or
 *   thinking block; tool calls may stay open while later blocks run; a tool
 *   call has a non-empty id (unique in the call) and name, and its end carries
 *   its arguments as one complete JSON object;
 * - replay state and usage at most once each, after start;
 * - exactly one terminal: `done` (every block ended; reason STOP only without
 *   tool calls, TOOL_USE only with at least one) or `failure` (at any point);
 *   nothing after it, not even a keepalive.
 *
 * Pure: no I/O, no clocks, no service logic. Both the generated messages and
 * their init shapes fit `StreamEvent`.
 */
import { StopReason } from "@byok/contracts";

export type BlockKind = "text" | "thinking" | "tool";

/** The part of a ModelEvent the rules read. */
export type StreamEvent =
  | { readonly case: "start" | "replay" | "usage" | "failure" | "keepalive"; readonly value?: unknown }
  | { readonly case: "textStart" | "textEnd" | "thinkingStart" | "thinkingEnd"; readonly value: { readonly index?: number } }
  | { readonly case: "textDelta" | "thinkingDelta"; readonly value: { readonly index?: number; readonly text?: string } }
  | { readonly case: "toolCallStart"; readonly value: { readonly index?: number; readonly callId?: string; readonly name?: string } }
  | { readonly case: "toolCallArgsDelta"; readonly value: { readonly index?: number; readonly delta?: string } }
  | { readonly case: "toolCallEnd"; readonly value: { readonly index?: number; readonly argumentsJson?: string } }
  | { readonly case: "done"; readonly value: { readonly reason?: StopReason } }
  | { readonly case: undefined; readonly value?: undefined };

export type ModelEventCase = Exclude<StreamEvent["case"], undefined>;

/**
 * Where an event may come:
 * - "first": before anything but keepalives;
 * - "content": after start, before the replay state and usage;
 * - "closing": after start;
 * - "anytime": before the terminal.
 */
export type Place = "first" | "content" | "closing" | "anytime";

export type Effect =
  | { readonly kind: "start" }
  | { readonly kind: "open"; readonly block: BlockKind }
  | { readonly kind: "fill"; readonly block: BlockKind }
  | { readonly kind: "close"; readonly block: BlockKind }
  | { readonly kind: "once"; readonly item: "replay" | "usage" }
  | { readonly kind: "done" }
  | { readonly kind: "failure" }
  | { readonly kind: "none" };

export interface EventRule {
  readonly place: Place;
  readonly effect: Effect;
}

/** Which event may follow which: the one table. */
export const MODEL_STREAM_RULES: { readonly [C in ModelEventCase]: EventRule } = {
  start: { place: "first", effect: { kind: "start" } },
  textStart: { place: "content", effect: { kind: "open", block: "text" } },
  textDelta: { place: "content", effect: { kind: "fill", block: "text" } },
  textEnd: { place: "content", effect: { kind: "close", block: "text" } },
  thinkingStart: { place: "content", effect: { kind: "open", block: "thinking" } },
  thinkingDelta: { place: "content", effect: { kind: "fill", block: "thinking" } },
  thinkingEnd: { place: "content", effect: { kind: "close", block: "thinking" } },
  toolCallStart: { place: "content", effect: { kind: "open", block: "tool" } },
  toolCallArgsDelta: { place: "content", effect: { kind: "fill", block: "tool" } },
  toolCallEnd: { place: "content", effect: { kind: "close", block: "tool" } },
  replay: { place: "closing", effect: { kind: "once", item: "replay" } },
  usage: { place: "closing", effect: { kind: "once", item: "usage" } },
  done: { place: "closing", effect: { kind: "done" } },
  failure: { place: "anytime", effect: { kind: "failure" } },
  keepalive: { place: "anytime", effect: { kind: "none" } },
};

export interface BlockRule {
  /** An exclusive block may not start while another exclusive block is open. */
  readonly exclusive: boolean;
  /** What the block's end must carry. */
  readonly end: "nothing" | "json-object-arguments";
}

/** Rules per block kind. */
export const BLOCK_RULES: { readonly [K in BlockKind]: BlockRule } = {
  text: { exclusive: true, end: "nothing" },
  thinking: { exclusive: true, end: "nothing" },
  tool: { exclusive: false, end: "json-object-arguments" },
};

/** The stop reasons `done` may carry and how many tool calls each needs. */
export const STOP_RULES: ReadonlyMap<StopReason, { readonly name: string; readonly toolCalls: "none" | "at-least-one" }> = new Map([
  [StopReason.STOP, { name: "stop", toolCalls: "none" as const }],
  [StopReason.TOOL_USE, { name: "tool_use", toolCalls: "at-least-one" as const }],
]);

export type StreamVerdict = { readonly kind: "accepted" } | { readonly kind: "violation"; readonly message: string };

const ACCEPTED: StreamVerdict = { kind: "accepted" };

/** snake_case name of an event, as in model.proto ("tool_call_start"). */
export function eventName(event: StreamEvent): string {
  return event.case === undefined ? "empty event" : event.case.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
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

interface BlockState {
  readonly kind: BlockKind;
  open: boolean;
}

/**
 * Checks one stream against the table, event by event. `accept` applies an
 * event that keeps the rules and leaves the state as it was for one that
 * breaks them (a writer may still end the stream with a failure); `verdict`
 * only says whether it would accept. A reader that gives up on a broken
 * stream calls abandon().
 */
export class ModelStreamChecker {
  #started = false;
  #ended = false;
  #replay = false;
  #usage = false;
  readonly #blocks = new Map<number, BlockState>();
  readonly #callIds = new Set<string>();
  #toolCalls = 0;

  get started(): boolean {
    return this.#started;
  }

  /** A terminal was accepted, or a violation ended the stream. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Blocks started so far (any kind). */
  get blocksStarted(): number {
    return this.#blocks.size;
  }

  get toolCalls(): number {
    return this.#toolCalls;
  }

  /** The kind of the open block at `index`, if one is open there. */
  openBlock(index: number): BlockKind | undefined {
    const block = this.#blocks.get(index);
    return block?.open === true ? block.kind : undefined;
  }

  /** Open blocks, in index order. */
  openBlocks(): Array<{ readonly index: number; readonly kind: BlockKind }> {
    const open: Array<{ index: number; kind: BlockKind }> = [];
    for (const [index, block] of this.#blocks) if (block.open) open.push({ index, kind: block.kind });
    return open.sort((a, b) => a.index - b.index);
  }

  /** The reader gave up on the stream (a violation, idle timeout, transport error): every later event is refused. */
  abandon(): void {
    this.#ended = true;
  }

  verdict(event: StreamEvent): StreamVerdict {
    return this.#judge(event, false);
  }

  accept(event: StreamEvent): StreamVerdict {
    return this.#judge(event, true);
  }

  #judge(event: StreamEvent, apply: boolean): StreamVerdict {
    const name = eventName(event);
    if (this.#ended) return violation(`${name} after the terminal event`);
    if (event.case === undefined) return violation("event without a payload (unknown event type)");
    const rule = MODEL_STREAM_RULES[event.case];
    switch (rule.place) {
      case "first":
        if (this.#started) return violation(`duplicate ${name}`);
        break;
      case "content":
        if (!this.#started) return violation(`${name} before start`);
        if (this.#replay || this.#usage) return violation(`${name} after the ${this.#replay ? "replay state" : "usage"}`);
        break;
      case "closing":
        if (!this.#started) return violation(`${name} before start`);
        break;
      case "anytime":
        break;
      default: {
        const never: never = rule.place;
        throw new Error(`unknown place ${String(never)}`);
      }
    }
    const verdict = this.#effect(event, rule.effect, name);
    if (verdict.kind === "accepted" && apply) this.#apply(event, rule.effect);
    return verdict;
  }

  #effect(event: StreamEvent, effect: Effect, name: string): StreamVerdict {
    switch (effect.kind) {
      case "start":
      case "failure":
      case "none":
        return ACCEPTED;
      case "open": {
        const index = indexOf(event);
        if (this.#blocks.has(index)) return violation(`${name} reuses block index ${index}`);
        if (event.case === "toolCallStart") {
          const callId = event.value.callId ?? "";
          if (callId === "") return violation(`${name} at index ${index} has an empty call id`);
          if ((event.value.name ?? "") === "") return violation(`${name} at index ${index} has an empty tool name`);
          if (this.#callIds.has(callId)) return violation(`${name} repeats call id ${JSON.stringify(callId)}`);
        }
        if (BLOCK_RULES[effect.block].exclusive) {
          const other = this.openBlocks().find((b) => BLOCK_RULES[b.kind].exclusive);
          if (other !== undefined) return violation(`${name} at index ${index} while ${other.kind} block ${other.index} is still open`);
        }
        return ACCEPTED;
      }
      case "fill":
      case "close": {
        const index = indexOf(event);
        const block = this.#blocks.get(index);
        if (block === undefined) return violation(`${name}: unknown block index ${index}`);
        if (block.kind !== effect.block) return violation(`${name}: block ${index} is a ${block.kind} block`);
        if (!block.open) return violation(`${name}: block ${index} already ended`);
        if (effect.kind === "close" && BLOCK_RULES[effect.block].end === "json-object-arguments") {
          const argumentsJson = event.case === "toolCallEnd" ? (event.value.argumentsJson ?? "") : "";
          if (!isJsonObjectText(argumentsJson))
            return violation(`${name} at index ${index} carries arguments that are not complete JSON (one JSON object is required)`);
        }
        return ACCEPTED;
      }
      case "once": {
        const seen = effect.item === "replay" ? this.#replay : this.#usage;
        return seen ? violation(`second ${effect.item === "replay" ? "replay state" : "usage"}`) : ACCEPTED;
      }
      case "done": {
        const open = this.openBlocks()[0];
        if (open !== undefined) return violation(`${name} while ${open.kind} block ${open.index} is still open`);
        const reason = event.case === "done" ? (event.value.reason ?? StopReason.UNSPECIFIED) : StopReason.UNSPECIFIED;
        const stop = STOP_RULES.get(reason);
        if (stop === undefined) return violation(`${name} with stop reason ${reason}`);
        if (stop.toolCalls === "none" && this.#toolCalls > 0) return violation(`${name}(${stop.name}) with ${this.#toolCalls} tool call(s)`);
        if (stop.toolCalls === "at-least-one" && this.#toolCalls === 0) return violation(`${name}(${stop.name}) without any tool call`);
        return ACCEPTED;
      }
      default: {
        const never: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(never)}`);
      }
    }
  }

  #apply(event: StreamEvent, effect: Effect): void {
    switch (effect.kind) {
      case "start":
        this.#started = true;
        return;
      case "open":
        this.#blocks.set(indexOf(event), { kind: effect.block, open: true });
        if (event.case === "toolCallStart") {
          this.#callIds.add(event.value.callId ?? "");
          this.#toolCalls++;
        }
        return;
      case "close":
        (this.#blocks.get(indexOf(event)) as BlockState).open = false;
        return;
      case "once":
        if (effect.item === "replay") this.#replay = true;
        else this.#usage = true;
        return;
      case "done":
      case "failure":
        this.#ended = true;
        return;
      case "fill":
      case "none":
        return;
      default: {
        const never: never = effect;
        throw new Error(`unknown effect ${JSON.stringify(never)}`);
      }
    }
  }
}

function indexOf(event: StreamEvent): number {
  switch (event.case) {
    case "textStart":
    case "textDelta":
    case "textEnd":
    case "thinkingStart":
    case "thinkingDelta":
    case "thinkingEnd":
    case "toolCallStart":
    case "toolCallArgsDelta":
    case "toolCallEnd":
      return event.value.index ?? 0;
    default:
      return 0;
  }
}

function violation(message: string): StreamVerdict {
  return { kind: "violation", message };
}
