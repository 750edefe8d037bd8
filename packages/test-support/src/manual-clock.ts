/**
 * A Clock (packages/platform/src/clock.ts) that moves only when the test says
 * so: timers fire in due order inside `advance(ms)`, and `whenTimers(n)` waits
 * until the code under test has set its timers, so retry and timeout tests
 * neither wait real time nor race it.
 *
 *   const clock = new ManualClock();
 *   const call = runSomething({ clock });
 *   await clock.whenTimers(1);            // the code is now waiting
 *   expect(clock.pendingDelays()).toEqual([1000]);
 *   await clock.advance(1000);            // ... and its wait is over
 */
import type { Clock, Timer } from "@byok/platform/clock";

interface Entry {
  due: number;
  readonly ms: number;
  readonly order: number;
  readonly callback: () => void;
  done: boolean;
}

interface TimerWaiter {
  readonly count: number;
  readonly resolve: () => void;
}

/** Lets promise continuations (and I/O callbacks already due) run before the next timer fires. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class ManualClock implements Clock {
  #now: number;
  #order = 0;
  #entries: Entry[] = [];
  #waiters: TimerWaiter[] = [];

  /** `start`: the epoch milliseconds now() begins at (default 2026-01-01T00:00:00Z). */
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): Timer {
    const entry: Entry = { due: this.#now + Math.max(0, ms), ms: Math.max(0, ms), order: this.#order++, callback, done: false };
    this.#entries.push(entry);
    this.#wakeWaiters();
    return {
      cancel: () => {
        entry.done = true;
        this.#entries = this.#entries.filter((e) => e !== entry);
      },
      refresh: () => {
        if (!entry.done) entry.due = this.#now + entry.ms;
      },
    };
  }

  /** Timers set so far (fired and cancelled ones included). */
  get timersSet(): number {
    return this.#order;
  }

  /** The durations of the timers still pending, in due order. */
  pendingDelays(): number[] {
    return this.#pending().map((e) => e.ms);
  }

  /** How long until the next pending timer falls due (undefined: none pending). */
  msUntilNextTimer(): number | undefined {
    const next = this.#pending()[0];
    return next === undefined ? undefined : next.due - this.#now;
  }

  /** Resolves once `count` timers have been set in total (counting from this clock's creation). */
  whenTimers(count = 1): Promise<void> {
    if (this.#order >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const next = this.#pending()[0];
      if (next === undefined || next.due > target) break;
      this.#now = next.due;
      next.done = true;
      this.#entries = this.#entries.filter((e) => e !== next);
      next.callback();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  #pending(): Entry[] {
    return this.#entries.filter((e) => !e.done).sort((a, b) => a.due - b.due || a.order - b.order);
  }

  #wakeWaiters(): void {
    const ready = this.#waiters.filter((w) => this.#order >= w.count);
    this.#waiters = this.#waiters.filter((w) => this.#order < w.count);
    for (const w of ready) w.resolve();
  }
}
