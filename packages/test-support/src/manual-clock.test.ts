import { describe, expect, it } from "vitest";
import { sleep } from "@byok/platform/clock";
import { ManualClock } from "./manual-clock.ts";

describe("ManualClock", () => {
  it("fires timers only when advanced, in due order, at their due time", async () => {
    const clock = new ManualClock(1_000);
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(["b", clock.now()]), 200);
    clock.setTimeout(() => fired.push(["a", clock.now()]), 100);
    clock.setTimeout(() => fired.push(["c", clock.now()]), 200);
    expect(clock.pendingDelays()).toEqual([100, 200, 200]);
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(101);
    expect(fired).toEqual([
      ["a", 1_100],
      ["b", 1_200],
      ["c", 1_200],
    ]);
    expect(clock.now()).toBe(1_200);
  });

  it("cancels and refreshes timers", async () => {
    const clock = new ManualClock();
    let fired = 0;
    const cancelled = clock.setTimeout(() => fired++, 10);
    const refreshed = clock.setTimeout(() => fired++, 100);
    cancelled.cancel();
    await clock.advance(60);
    refreshed.refresh();
    expect(clock.msUntilNextTimer()).toBe(100);
    await clock.advance(99);
    expect(fired).toBe(0);
    await clock.advance(1);
    expect(fired).toBe(1);
    expect(clock.msUntilNextTimer()).toBeUndefined();
  });

  it("runs timers that a fired timer's continuation sets, within the same advance", async () => {
    const clock = new ManualClock();
    const order: number[] = [];
    void (async () => {
      await sleep(clock, 10);
      order.push(clock.now());
      await sleep(clock, 10);
      order.push(clock.now());
    })();
    const start = clock.now();
    await clock.advance(25);
    expect(order.map((t) => t - start)).toEqual([10, 20]);
  });

  it("tells when the code under test has set its timers", async () => {
    const clock = new ManualClock();
    const armed = clock.whenTimers(2);
    let resolved = false;
    void armed.then(() => (resolved = true));
    clock.setTimeout(() => undefined, 5);
    await Promise.resolve();
    expect(resolved).toBe(false);
    clock.setTimeout(() => undefined, 5);
    await armed;
    expect(clock.timersSet).toBe(2);
  });
});

describe("sleep", () => {
  it("resolves true after the time passed, false at once when aborted", async () => {
    const clock = new ManualClock();
    const slept = sleep(clock, 1_000);
    await clock.advance(1_000);
    expect(await slept).toBe(true);

    const abort = new AbortController();
    const cut = sleep(clock, 1_000, abort.signal);
    abort.abort();
    expect(await cut).toBe(false);
    expect(clock.pendingDelays()).toEqual([]);
    expect(await sleep(clock, 1_000, abort.signal)).toBe(false);
  });
});
