/**
 * Messages each service put on / took off the bus: byok_nats_client_messages_total
 * and byok_nats_client_bytes_total{direction} from each service's /metrics
 * (packages/platform/src/ops-server.ts). Two scrapes give per-turn numbers.
 */
import { renderTable } from "./report.ts";
import { metricsText, metricValue } from "./service-metrics.ts";

export type BusCounters = ReadonlyMap<string, { inMsgs: number; outMsgs: number; outBytes: number }>;

/** The Cursor path's services (acp-adapter and admin do no work in these turns). */
const SERVICES = ["edge-proxy", "cursor-adapter", "run-worker", "provider-gateway", "store"] as const;

export async function readBusCounters(opsUrls: Readonly<Record<string, string>>): Promise<BusCounters> {
  const out = new Map<string, { inMsgs: number; outMsgs: number; outBytes: number }>();
  for (const service of SERVICES) {
    const url = opsUrls[service];
    if (url === undefined) continue;
    const text = await metricsText(url);
    out.set(service, {
      inMsgs: metricValue(text, "byok_nats_client_messages_total", 'direction="in"'),
      outMsgs: metricValue(text, "byok_nats_client_messages_total", 'direction="out"'),
      outBytes: metricValue(text, "byok_nats_client_bytes_total", 'direction="out"'),
    });
  }
  return out;
}

export function busMessagesTable(before: BusCounters, after: BusCounters, turns: number): string {
  const fmt = (n: number): string => (Number.isFinite(n) ? (n / turns).toFixed(1) : "-");
  let totalOut = 0;
  const rows = [...after].map(([service, a]) => {
    const b = before.get(service);
    const outMsgs = a.outMsgs - (b?.outMsgs ?? Number.NaN);
    if (Number.isFinite(outMsgs)) totalOut += outMsgs;
    return [service, fmt(outMsgs), fmt(a.inMsgs - (b?.inMsgs ?? Number.NaN)), fmt(a.outBytes - (b?.outBytes ?? Number.NaN))];
  });
  rows.push(["total published", fmt(totalOut), "-", "-"]);
  return renderTable(["service", "published / turn", "received / turn", "bytes published / turn"], rows);
}
