/**
 * A store clock for tests of per-minute limits: real time shifted so that
 * "now" is one second into a UTC minute when the clock is made. A test that
 * makes its calls within the next 59 s then sees one minute window, however
 * the machine's load stretches it, and does not wait for the wall clock to
 * leave the end of a minute. Only the store gets it (StoreOptions.now /
 * GatewayHarnessOptions.storeNow): minute windows are the store's; callers'
 * own clocks stay real (their lease timings are durations).
 */
export function minuteStartClock(realNow: () => number = Date.now): () => Date {
  const made = realNow();
  const offset = 60_000 - (made % 60_000) + 1_000;
  return () => new Date(realNow() + offset);
}
