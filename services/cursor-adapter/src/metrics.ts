/**
 * The cursor adapter's series (no request, run or member ids in labels):
 *
 *   byok_adapter_active_runs                              gauge
 *     Runs with an open session whose RunSSE stream has not ended yet (read
 *     from the run registry at scrape time).
 *   byok_adapter_run_sse_open_streams                     gauge
 *     RunSSE connections attached right now.
 *   byok_adapter_run_sse_streams_total{end}               counter
 *     RunSSE connections that ended: end=finished (the run's end was
 *     delivered) or disconnected (the client went away first).
 *   byok_adapter_kv_blob_round_trip_seconds{op, outcome}  histogram
 *     KV blob requests to the client (op set | get), from sending the request
 *     to its answer: outcome ok, client_error, hash_mismatch, timeout, or
 *     closed (the run ended while it waited).
 */
import { Counter, Gauge, Histogram, secondsSince, type Registry } from "@byok/platform";
import type { KvErrorKind } from "./checkpoint/kv-channel.ts";

export type KvOp = "set" | "get";
export type KvOutcome = "ok" | KvErrorKind;
export type RunSseEnd = "finished" | "disconnected";

export interface CursorAdapterMetrics {
  runSseEnded(end: RunSseEnd): void;
  /** A KV request was answered or gave up; `startedMs` is performance.now() when it was sent. */
  kvRoundTrip(op: KvOp, outcome: KvOutcome, startedMs: number): void;
}

export interface CursorAdapterMetricSources {
  readonly activeRuns: () => number;
  readonly openRunSseStreams: () => number;
}

export function createCursorAdapterMetrics(registry: Registry, sources: CursorAdapterMetricSources): CursorAdapterMetrics {
  new Gauge({
    name: "byok_adapter_active_runs",
    help: "Runs with an open session whose RunSSE stream has not ended.",
    registers: [registry],
    collect() {
      this.set(sources.activeRuns());
    },
  });
  new Gauge({
    name: "byok_adapter_run_sse_open_streams",
    help: "RunSSE connections attached now.",
    registers: [registry],
    collect() {
      this.set(sources.openRunSseStreams());
    },
  });
  const streams = new Counter({ name: "byok_adapter_run_sse_streams_total", help: "RunSSE connections ended, by how they ended.", labelNames: ["end"], registers: [registry] });
  streams.inc({ end: "finished" }, 0);
  streams.inc({ end: "disconnected" }, 0);
  const kv = new Histogram({
    name: "byok_adapter_kv_blob_round_trip_seconds",
    help: "KV blob request to the client until its answer, by op and outcome.",
    labelNames: ["op", "outcome"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return {
    runSseEnded(end) {
      streams.inc({ end });
    },
    kvRoundTrip(op, outcome, startedMs) {
      kv.observe({ op, outcome }, secondsSince(startedMs));
    },
  };
}
