/**
 * Property-based fuzzing with fast-check. A target pairs an arbitrary (what
 * inputs look like: random bytes, real messages with bytes mutated, random
 * blob graphs) with a check that throws when the code under test breaks its
 * contract (throws what it must not, or returns something inconsistent).
 *
 * The unit tests run each target a few hundred times (`assertFuzzTarget`);
 * bench/fuzz.ts runs them a million times each (`runFuzzTarget`) and prints
 * the crashes and the slowest input.
 */
import { performance } from "node:perf_hooks";
import fc from "fast-check";

export interface FuzzTarget<T = unknown> {
  readonly name: string;
  readonly arbitrary: fc.Arbitrary<T>;
  /** Throws (or rejects) when the code under test broke its contract for `input`. */
  check(input: T): void | Promise<void>;
}

/** A target with its input type hidden, so targets of different inputs fit in one list. */
export interface Fuzzable {
  readonly name: string;
  /** fast-check's own loop with shrinking (unit tests). */
  assert(numRuns: number): Promise<void>;
  /** Every input timed, crashes counted (bench/fuzz.ts). */
  run(runs: number, seed: number): Promise<FuzzReport>;
}

/** Declares a target (its input type inferred from the arbitrary). */
export function fuzzTarget<T>(target: FuzzTarget<T>): Fuzzable {
  return { name: target.name, assert: (numRuns) => assertFuzzTarget(target, numRuns), run: (runs, seed) => runFuzzTarget(target, runs, seed) };
}

/** fast-check's own loop (shrinking included): fails with the smallest input that broke the check. */
export async function assertFuzzTarget<T>(target: FuzzTarget<T>, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(target.arbitrary, async (input) => {
      await target.check(input);
    }),
    { numRuns },
  );
}

export interface FuzzCrash {
  readonly input: string;
  readonly error: string;
}

export interface FuzzReport {
  readonly name: string;
  readonly runs: number;
  readonly crashes: number;
  /** The first few crashing inputs. */
  readonly examples: readonly FuzzCrash[];
  /** The slowest check, and the fastest of 3 re-runs of that input alone (a GC pause or a busy machine shows as a gap). */
  readonly slowest: { readonly ms: number; readonly rerunMs: number; readonly input: string };
  /** Time spent in the checks (generation excluded). */
  readonly checkMs: number;
  readonly wallMs: number;
}

const BATCH = 10_000;
const MAX_SHOWN = 400;

/** Runs `runs` inputs (in batches, each with its own seed), timing every check. */
export async function runFuzzTarget<T>(target: FuzzTarget<T>, runs: number, seed: number): Promise<FuzzReport> {
  const started = performance.now();
  let crashes = 0;
  const examples: FuzzCrash[] = [];
  let slowest = { ms: -1, input: "" };
  let slowestInput: T | undefined;
  let checkMs = 0;
  for (let done = 0, batch = 0; done < runs; batch++) {
    const size = Math.min(BATCH, runs - done);
    for (const input of fc.sample(target.arbitrary, { numRuns: size, seed: seed + batch })) {
      const t0 = performance.now();
      let failure: unknown;
      let failed = false;
      try {
        const pending = target.check(input);
        if (pending !== undefined) await pending;
      } catch (err) {
        failed = true;
        failure = err;
      }
      const ms = performance.now() - t0;
      checkMs += ms;
      if (ms > slowest.ms) {
        slowest = { ms, input: shown(input) };
        slowestInput = input;
      }
      if (failed) {
        crashes += 1;
        if (examples.length < 5) examples.push({ input: shown(input), error: String((failure as Error)?.stack ?? failure).slice(0, 800) });
      }
    }
    done += size;
  }
  let rerunMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3 && slowestInput !== undefined; i++) {
    const t0 = performance.now();
    try {
      await target.check(slowestInput);
    } catch {
      // counted above
    }
    rerunMs = Math.min(rerunMs, performance.now() - t0);
  }
  return { name: target.name, runs, crashes, examples, slowest: { ...slowest, rerunMs }, checkMs, wallMs: performance.now() - started };
}

function shown(input: unknown): string {
  const text = fc.stringify(input);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}... (${text.length} chars)` : text;
}

/** Byte-level mutations of a valid encoding: flips, inserts, deletions, truncation. */
export function mutatedBytes(seeds: readonly Uint8Array[]): fc.Arbitrary<Uint8Array> {
  const edit = fc.oneof(
    fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bits: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
    fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
    fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  );
  return fc.tuple(fc.constantFrom(...seeds), fc.array(edit, { minLength: 0, maxLength: 4 })).map(([seed, edits]) => {
    let bytes = Uint8Array.from(seed);
    for (const e of edits) {
      const at = bytes.length === 0 ? 0 : e.at % bytes.length;
      switch (e.kind) {
        case "flip":
          if (bytes.length > 0) bytes[at] = bytes[at]! ^ e.bits;
          break;
        case "insert":
          bytes = Uint8Array.from([...bytes.subarray(0, at), ...e.bytes, ...bytes.subarray(at)]);
          break;
        case "delete":
          bytes = Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(at + e.count)]);
          break;
        case "truncate":
          bytes = bytes.subarray(0, at);
          break;
      }
    }
    return bytes;
  });
}
