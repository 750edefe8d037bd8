/**
 * Reading the services' Prometheus text (`/metrics` of each ops listener,
 * packages/platform/src/ops-server.ts) for benches that compare two scrapes.
 */

/** The /metrics text of one service, or "" when it cannot be read (then every value is NaN). */
export async function metricsText(url: string): Promise<string> {
  try {
    return await (await fetch(`${url}/metrics`)).text();
  } catch {
    return "";
  }
}

/** The value of the first sample of `metric` (whose labels include `label`, when given); NaN when there is none. */
export function metricValue(text: string, metric: string, label?: string): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    if (label !== undefined && !line.includes(label)) continue;
    return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return Number.NaN;
}
