/**
 * Messages each service put on / took off the bus: byok_nats_client_messages_total
 * and byok_nats_client_bytes_total{direction} from each service's /metrics
 * (packages/platform/src/ops-server.ts). Two scrapes give per-turn numbers.
 */
import { renderTable } from "./report.ts";

export type BusCounters = ReadonlyMap<string, { inMsgs: number; outMsgs: number; outBytes: number }>;

/** The Cursor path's services (acp-adapter and admin do no work in these turns). */
const SERVICES = ["edge-proxy", "cursor-adapter", "run-worker", "provider-gateway", "store"] as const;

function value(text: string, metric: string, direction: "in" | "out"): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${metric}{`) || !line.includes(`direction="${direction}"`)) continue;
    return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return Number.NaN;
}

export async function readBusCounters(opsUrls: Readonly<Record<string, string>>): Promise<BusCounters> {
  const out = new Map<string, { inMsgs: number; outMsgs: number; outBytes: number }>();
  for (const service of SERVICES) {
    const url = opsUrls[service];
    if (url === undefined) continue;
    let text = "";
    try {
      text = await (await fetch(`${url}/metrics`)).text();
    } catch {
      // no listener: NaN below
    }
    out.set(service, {
      inMsgs: value(text, "byok_nats_client_messages_total", "in"),
      outMsgs: value(text, "byok_nats_client_messages_total", "out"),
      outBytes: value(text, "byok_nats_client_bytes_total", "out"),
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
