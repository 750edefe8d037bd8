/**
 * V8 heap facts the GC measurements of the benches share: whether a `gc`
 * performance entry is a minor GC (a scavenge of the young generation), how
 * large the old generation is (old and large-object spaces), and what each
 * minor GC promoted (the old generation's growth since the GC before it).
 */
import { constants, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";

export interface GcStep {
  readonly minor: boolean;
  /** Bytes the old generation grew by since the previous GC, if this was a minor GC (else 0). */
  readonly promoted: number;
}

/** Watches this process's GCs, handing each one to `onGc` with what it promoted; returns the stop function. */
export function watchGcs(onGc: (entry: PerformanceEntry, step: GcStep) => void): () => void {
  let lastOld = oldGeneration();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const old = oldGeneration();
      const minor = isMinorGc(entry);
      onGc(entry, { minor, promoted: minor ? Math.max(0, old - lastOld) : 0 });
      lastOld = old;
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}

function isMinorGc(entry: PerformanceEntry): boolean {
  return (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
}

function oldGeneration(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (space.space_name === "old_space" || space.space_name === "lo_space") used += space.space_used_size;
  return used;
}
