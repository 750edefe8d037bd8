/**
 * Deltas that arrive together travel together: text and thinking deltas of
 * one block that follow each other within a short window are sent as one
 * delta (their texts concatenated), so the messages of a model call grow with
 * its duration, not with the provider's chunk count.
 *
 * - The first delta of a call or of a block (the first after any other
 *   event or a flush) is sent at once. So is a delta that arrives while the
 *   window (delta-window.ts) is closed; sending it opens the window.
 * - While the window is open, deltas are held: those of the same block (same
 *   merge key) are joined, and the joined delta is sent when the window ends.
 *   The window may be shared by every coalescer of a process: then one
 *   stream's delta can wait for a window another stream opened, at most
 *   `windowMs`, and the held deltas of all streams go out together.
 * - Any other event (a block start or end, a tool call, usage, a terminal, a
 *   keepalive) first sends what is pending, then goes out itself. A delta of
 *   another block sends what is pending and then goes out at once. Nothing is
 *   ever reordered and nothing is merged across event kinds or blocks.
 * - `flush()` sends what is pending now: callers use it before anything that
 *   must not overtake the deltas on another path (a state event, a barrier).
 *
 * Pure apart from the window's timer, which comes from the caller (a Clock).
 */
import type { DeltaWindow } from "./delta-window.ts";

/** The timer the coalescer needs (structurally a @byok/platform Clock). */
export interface CoalescerTimers {
  setTimeout(callback: () => void, ms: number): { cancel(): void };
}

export interface CoalescingRule<E> {
  /** Events with the same key may be joined; undefined = never joined. */
  key(event: E): string | undefined;
  /** `first` followed by `next` as one event. */
  merge(first: E, next: E): E;
}

/** A oneof event whose text/thinking deltas are `{ case, value: { index, text } }` (ModelEvent and ClientEvent bodies). */
export interface BlockDeltaLike {
  readonly case?: string | undefined;
  readonly value?: unknown;
}

const MERGED_CASES = new Set(["textDelta", "thinkingDelta"]);

function blockDelta(event: BlockDeltaLike): { index: number; text: string } | undefined {
  if (event.case === undefined || !MERGED_CASES.has(event.case)) return undefined;
  const value = event.value as { index?: unknown; text?: unknown } | undefined;
  return typeof value?.index === "number" && typeof value.text === "string" ? { index: value.index, text: value.text } : undefined;
}

/** Text and thinking deltas of the same block index are joined; everything else stands alone. */
export function blockDeltaRule<E extends BlockDeltaLike>(): CoalescingRule<E> {
  return {
    key(event) {
      const delta = blockDelta(event);
      return delta === undefined ? undefined : `${event.case}:${delta.index}`;
    },
    merge(first, next) {
      const a = blockDelta(first)!;
      const b = blockDelta(next)!;
      return { ...first, value: { ...(first.value as object), index: a.index, text: a.text + b.text } } as E;
    },
  };
}

export class DeltaCoalescer<E> {
  readonly #emit: (event: E) => void;
  readonly #rule: CoalescingRule<E>;
  readonly #window: DeltaWindow;
  readonly #member = { release: (): void => this.#release() };
  #pending: { key: string; event: E } | undefined;
  /** The key of the last delta sent, until another event or a flush: a delta with another key starts a block. */
  #lastKey: string | undefined;

  /** `window`: shared by the coalescers of a process, or one of its own. */
  constructor(emit: (event: E) => void, rule: CoalescingRule<E>, window: DeltaWindow) {
    this.#emit = emit;
    this.#rule = rule;
    this.#window = window;
  }

  push(event: E): void {
    const key = this.#window.windowMs > 0 ? this.#rule.key(event) : undefined;
    if (key === undefined) {
      this.flush();
      this.#emit(event);
      return;
    }
    if (this.#pending !== undefined && this.#pending.key === key) {
      this.#pending = { key, event: this.#rule.merge(this.#pending.event, event) };
      return;
    }
    if (this.#pending !== undefined) this.flush();
    if (this.#lastKey !== key || !this.#window.open) {
      this.#lastKey = key;
      this.#emit(event);
      this.#window.sentAtOnce();
      return;
    }
    this.#pending = { key, event };
    this.#window.hold(this.#member);
  }

  /** Sends the pending delta (if any) now; the next delta goes out at once. */
  flush(): void {
    this.#lastKey = undefined;
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    this.#window.forget(this.#member);
    this.#emit(pending.event);
  }

  /** A delta is waiting for its window to end. */
  get holding(): boolean {
    return this.#pending !== undefined;
  }

  #release(): void {
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.#emit(pending.event);
  }
}
