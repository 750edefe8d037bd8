/**
 * V8 heap facts the GC measurements of the benches share: whether a `gc`
 * performance entry is a minor GC (a scavenge of the young generation), and
 * how large the old generation is now (old and large-object spaces), whose
 * growth across a minor GC is what that GC promoted.
 */
import { constants, type PerformanceEntry } from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";

export function isMinorGc(entry: PerformanceEntry): boolean {
  return (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
}

export function oldGeneration(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (space.space_name === "old_space" || space.space_name === "lo_space") used += space.space_used_size;
  return used;
}
