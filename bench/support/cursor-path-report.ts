/**
 * Tables of bench/cursor-path.ts: gateway vs direct with the added ms at p50
 * and p99, CPU ms per turn per process, RSS per process at named points.
 */
import { formatMb, formatMs, percentile, renderTable } from "./report.ts";
import type { Sample } from "./proc-stats.ts";

export interface ArmSamples {
  readonly name: string;
  readonly direct: readonly number[];
  readonly gateway: readonly number[];
}

function added(gateway: number, direct: number): string {
  if (!Number.isFinite(gateway) || !Number.isFinite(direct)) return "-";
  const d = gateway - direct;
  return `${d >= 0 ? "+" : ""}${d.toFixed(2)}`;
}

/** One row per metric: direct and gateway p50/p99 and what the gateway adds. */
export function addedTable(rows: readonly ArmSamples[]): string {
  return renderTable(
    ["metric (ms)", "n", "direct p50", "gateway p50", "added p50", "direct p99", "gateway p99", "added p99"],
    rows.map((r) => {
      const d50 = percentile(r.direct, 50);
      const g50 = percentile(r.gateway, 50);
      const d99 = percentile(r.direct, 99);
      const g99 = percentile(r.gateway, 99);
      return [r.name, String(r.gateway.length), formatMs(d50), formatMs(g50), added(g50, d50), formatMs(d99), formatMs(g99), added(g99, d99)];
    }),
  );
}

/** CPU ms per turn of each process over a phase, and its idle rate (ms per second) measured before. */
export function cpuTable(perTurn: ReadonlyMap<string, number>, idlePerSecond: ReadonlyMap<string, number>, turns: number): string {
  let total = 0;
  const rows = [...perTurn].map(([name, ms]) => {
    total += ms;
    return [name, formatMs(ms / turns), formatMs(idlePerSecond.get(name) ?? Number.NaN)];
  });
  rows.push(["total", formatMs(total / turns), "-"]);
  return renderTable(["process", "cpu ms / turn", "idle cpu ms / s"], rows);
}

/** CPU used by each process during one open-runs level of the gateway arm. */
export interface OpenRunsBusy {
  readonly level: number;
  readonly cpu: ReadonlyMap<string, number>;
  /** The bench process (the fake Cursor clients). */
  readonly benchMs: number;
  /** The paced upstream's own process. */
  readonly upstreamMs: number;
  readonly wallMs: number;
}

/** One row per process, one column per open-runs level: cores busy (CPU ms per wall ms). */
export function busyTable(levels: readonly OpenRunsBusy[]): string {
  const names = [...(levels[0]?.cpu.keys() ?? [])];
  const cores = (ms: number, wallMs: number): string => (ms / wallMs).toFixed(2);
  const total = (l: OpenRunsBusy): number => [...l.cpu.values()].reduce((s, v) => s + v, 0);
  return renderTable(
    ["process", ...levels.map((l) => `${l.level} runs`)],
    [
      ...names.map((name) => [name, ...levels.map((l) => cores(l.cpu.get(name) ?? 0, l.wallMs))]),
      ["gateway processes", ...levels.map((l) => cores(total(l), l.wallMs))],
      ["bench process (fake clients)", ...levels.map((l) => cores(l.benchMs, l.wallMs))],
      ["paced upstream process", ...levels.map((l) => cores(l.upstreamMs, l.wallMs))],
    ],
  );
}

/** A process's (or group's) RSS in a sample; undefined for a group with no live process (e.g. the store's pool closed its idle connections). */
export function rssBytes(sample: Sample, name: string): number | undefined {
  const entry = sample.byName.get(name);
  return entry === undefined || entry.cpuByPid.size === 0 ? undefined : entry.rssBytes;
}

function rssOf(sample: Sample, name: string): string {
  const bytes = rssBytes(sample, name);
  return bytes === undefined ? "-" : formatMb(bytes);
}

/** One row per process, one column per point. */
export function rssTable(points: ReadonlyArray<{ label: string; sample: Sample }>): string {
  const names = [...(points[0]?.sample.byName.keys() ?? [])];
  return renderTable(
    ["process", ...points.map((p) => p.label)],
    names.map((name) => [name, ...points.map((p) => rssOf(p.sample, name))]),
  );
}

/** One row per point in time, one column per process (the soak: many points). */
export function rssOverTimeTable(points: ReadonlyArray<{ label: string; sample: Sample }>): string {
  const names = [...(points[0]?.sample.byName.keys() ?? [])];
  return renderTable(
    ["time", ...names],
    points.map((p) => [p.label, ...names.map((name) => rssOf(p.sample, name))]),
  );
}

export function formatRate(count: number, ms: number): string {
  return ms > 0 ? ((count * 1000) / ms).toFixed(1) : "-";
}
