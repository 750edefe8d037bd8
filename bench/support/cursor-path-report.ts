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

export function rssTable(points: ReadonlyArray<{ label: string; sample: Sample }>): string {
  const names = [...(points[0]?.sample.byName.keys() ?? [])];
  return renderTable(
    ["process", ...points.map((p) => p.label)],
    names.map((name) => [name, ...points.map((p) => formatMb(p.sample.byName.get(name)?.rssBytes ?? Number.NaN))]),
  );
}

export function formatRate(count: number, ms: number): string {
  return ms > 0 ? ((count * 1000) / ms).toFixed(1) : "-";
}
