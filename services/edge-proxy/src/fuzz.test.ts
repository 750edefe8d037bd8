import { describe, it } from "vitest";
import { edgeProxyFuzzTargets } from "./test-support/fuzz-targets.ts";

/** A few hundred inputs per target here; bench/fuzz.ts runs a million each. */
const RUNS = 700;

describe("edge proxy parsers under fuzzing (fast-check)", () => {
  for (const target of edgeProxyFuzzTargets) {
    it(`${target.name}: no input breaks it`, async () => {
      await target.assert(RUNS);
    });
  }
});
