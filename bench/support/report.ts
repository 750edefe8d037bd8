/**
 * Numbers for benchmark output: percentiles of millisecond samples, a baseline
 * vs candidate comparison (added ms and ratio per statistic) and plain-text
 * tables. Nothing here asserts on timings; it only prints.
 */
import os from "node:os";

export interface Summary {
  readonly count: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

export const STATISTICS = ["p50", "p95", "max"] as const;
export type Statistic = (typeof STATISTICS)[number];

/** Nearest-rank percentile of unsorted samples (p in 0..100); NaN when empty. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

export function summarize(samples: readonly number[]): Summary {
  return { count: samples.length, p50: percentile(samples, 50), p95: percentile(samples, 95), max: percentile(samples, 100) };
}

export function formatMs(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : "-";
}

export function formatRatio(candidate: number, baseline: number): string {
  return Number.isFinite(candidate) && Number.isFinite(baseline) && baseline > 0 ? `${(candidate / baseline).toFixed(2)}x` : "-";
}

export function formatAdded(candidate: number, baseline: number): string {
  if (!Number.isFinite(candidate) || !Number.isFinite(baseline)) return "-";
  const added = candidate - baseline;
  return `${added >= 0 ? "+" : ""}${added.toFixed(2)}`;
}

export function formatMb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Columns padded to their widest cell; numeric-looking cells right-aligned. */
export function renderTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const numeric = (cell: string): boolean => /^[+-]?[\d.]+(x| MB)?$|^-$/.test(cell);
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (numeric(c) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join("  ").trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

export interface ComparedMetric {
  readonly name: string;
  readonly baseline: readonly number[];
  readonly candidate: readonly number[];
}

/** One row per metric and statistic: baseline, candidate, added ms, ratio. */
export function comparisonTable(metrics: readonly ComparedMetric[], labels: { baseline: string; candidate: string }): string {
  const rows: string[][] = [];
  for (const metric of metrics) {
    const base = summarize(metric.baseline);
    const cand = summarize(metric.candidate);
    for (const stat of STATISTICS) {
      rows.push([stat === "p50" ? metric.name : "", stat, formatMs(base[stat]), formatMs(cand[stat]), formatAdded(cand[stat], base[stat]), formatRatio(cand[stat], base[stat])]);
    }
  }
  return renderTable(["metric (ms)", "stat", labels.baseline, labels.candidate, "added ms", "ratio"], rows);
}

export interface MachineContext {
  readonly cores: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly platform: string;
  readonly totalMemory: string;
  readonly loadAverage: string;
}

export function machineContext(): MachineContext {
  const cpus = os.cpus();
  return {
    cores: os.availableParallelism(),
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    totalMemory: formatMb(os.totalmem()),
    loadAverage: os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" / "),
  };
}

export interface MemorySnapshot {
  readonly label: string;
  readonly rss: number;
  readonly heapUsed: number;
}

export function memorySnapshot(label: string): MemorySnapshot {
  const m = process.memoryUsage();
  return { label, rss: m.rss, heapUsed: m.heapUsed };
}

export function memoryTable(snapshots: readonly MemorySnapshot[]): string {
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const rows = snapshots.map((s) => [s.label, formatMb(s.rss), formatMb(s.heapUsed)]);
  rows.push(["peak (whole run)", formatMb(peakRss), "-"]);
  return renderTable(["point", "rss", "heap used"], rows);
}
