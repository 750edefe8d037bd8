/**
 * Deltas that arrive together travel together: text and thinking deltas of
 * one block that follow each other within a short window are sent as one
 * delta (their texts concatenated), so the messages of a model call grow with
 * its duration, not with the provider's chunk count.
 *
 * - A delta that arrives while no window is open is sent at once (the first
 *   delta of a call, of a block, or after a pause is never delayed) and opens
 *   a window of `windowMs`. Deltas of the same block (same merge key) arriving
 *   inside it are joined; when the window ends the joined delta is sent and,
 *   if it held anything, a new window opens.
 * - Any other event (a block start or end, a tool call, usage, a terminal, a
 *   keepalive) first sends what is pending, then goes out itself, and closes
 *   the window. A delta of another block does the same. Nothing is ever
 *   reordered and nothing is merged across event kinds or blocks.
 * - `flush()` sends what is pending now: callers use it before anything that
 *   must not overtake the deltas on another path (a state event, a barrier).
 *
 * Pure apart from the timer, which comes from the caller (a Clock).
 */

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
  readonly #timers: CoalescerTimers;
  readonly #windowMs: number;
  #pending: { key: string; event: E } | undefined;
  #window: { cancel(): void } | undefined;

  constructor(emit: (event: E) => void, rule: CoalescingRule<E>, timers: CoalescerTimers, windowMs: number) {
    this.#emit = emit;
    this.#rule = rule;
    this.#timers = timers;
    this.#windowMs = windowMs;
  }

  push(event: E): void {
    const key = this.#windowMs > 0 ? this.#rule.key(event) : undefined;
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
    if (this.#window === undefined) {
      this.#emit(event);
      this.#openWindow();
      return;
    }
    this.#pending = { key, event };
  }

  /** Sends the pending delta (if any) now and closes the window. */
  flush(): void {
    this.#window?.cancel();
    this.#window = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.#emit(pending.event);
  }

  /** A delta is waiting for its window to end. */
  get holding(): boolean {
    return this.#pending !== undefined;
  }

  #openWindow(): void {
    this.#window = this.#timers.setTimeout(() => {
      this.#window = undefined;
      const pending = this.#pending;
      this.#pending = undefined;
      if (pending === undefined) return;
      this.#emit(pending.event);
      this.#openWindow();
    }, this.#windowMs);
  }
}
