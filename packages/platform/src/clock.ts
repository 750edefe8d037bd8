/**
 * Time as a dependency. Code that waits (retry backoff, Retry-After) or gives
 * up after a silence takes a Clock instead of calling setTimeout / Date.now
 * itself, so that its tests run on a manual clock they advance by hand
 * (ManualClock in @byok/test-support) instead of waiting real seconds and
 * racing the machine's scheduler. Production passes nothing and gets
 * `systemClock`.
 */

/** A pending callback of a Clock. */
export interface Timer {
  /** The callback will not run (no-op once it ran). */
  cancel(): void;
  /** Starts the wait over from now, with the same duration (a silence deadline pushed back). */
  refresh(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `callback` once, `ms` milliseconds from now. */
  setTimeout(callback: () => void, ms: number): Timer;
}

/** The machine's clock and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(callback, ms) {
    const timeout = setTimeout(callback, ms);
    return { cancel: () => clearTimeout(timeout), refresh: () => void timeout.refresh() };
  },
};

/** Resolves true after `ms` on `clock`, or false as soon as `signal` aborts (at once if it already has). */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve(false);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      resolve(false);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
