import { describe, it } from "vitest";
import { cursorAdapterFuzzTargets } from "./testing/fuzz-targets.ts";

/** A few hundred inputs per target here; bench/fuzz.ts runs a million each. */
const RUNS = 700;

describe("cursor adapter input parsing under fuzzing (fast-check)", () => {
  for (const target of cursorAdapterFuzzTargets) {
    it(`${target.name}: no input breaks it`, async () => {
      await target.assert(RUNS);
    }, 60_000);
  }
});
