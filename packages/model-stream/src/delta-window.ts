/**
 * The window that DeltaCoalescers wait in, shareable by every coalescer of a
 * process (every model call of a provider gateway, every run of a run worker).
 *
 * A window is open for `windowMs` after a delta went out at once. A coalescer
 * holding a delta while it is open registers here; when it ends every held
 * delta is released in the same timer callback (so one pass of the event loop
 * sends them all, and the connection writes them together), and a new window
 * opens if any was released. With nothing released the window closes and the
 * next delta goes out at once.
 *
 * Shared, the window turns the process's many paced streams (each one delta
 * every few tens of milliseconds, none joinable with its own next one) into
 * one batch per window: the downstream processes wake once per window rather
 * than once per delta. Private (one per coalescer) it is the per-call window.
 */
import type { CoalescerTimers } from "./delta-coalescer.ts";

/** A coalescer as the window sees it. */
export interface HeldDeltas {
  /** Sends what it holds (called when the window ends). */
  release(): void;
}

export class DeltaWindow {
  readonly windowMs: number;
  readonly #timers: CoalescerTimers;
  readonly #held = new Set<HeldDeltas>();
  #timer: { cancel(): void } | undefined;

  constructor(timers: CoalescerTimers, windowMs: number) {
    this.#timers = timers;
    this.windowMs = windowMs;
  }

  /** A delta is waiting somewhere: later deltas are held until the window ends. */
  get open(): boolean {
    return this.#timer !== undefined;
  }

  /** A delta went out at once: opens the window if it is closed. */
  sentAtOnce(): void {
    if (this.#timer === undefined && this.windowMs > 0) this.#open();
  }

  /** `member` holds a delta until the window ends (the window must be open). */
  hold(member: HeldDeltas): void {
    this.#held.add(member);
  }

  /** `member` sent what it held before the window ended (a flush, another event). */
  forget(member: HeldDeltas): void {
    this.#held.delete(member);
  }

  #open(): void {
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      if (this.#held.size === 0) return;
      const released = [...this.#held];
      this.#held.clear();
      this.#open();
      for (const member of released) member.release();
    }, this.windowMs);
  }
}
