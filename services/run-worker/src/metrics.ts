/**
 * The run worker's series (on the worker's own registry; every replica serves
 * its own):
 *
 *   byok_runs_total{outcome, failure_kind}                counter
 *     Runs this worker ended: outcome completed | cancelled | failed;
 *     failure_kind protocol | provider | store | client for failed runs, none
 *     otherwise. A delivery handed back to the queue (shutdown, store down at
 *     run.finish) is not an end; a repeated terminal for a run that had already
 *     ended is not counted again.
 *   byok_tool_round_duration_seconds{start}               histogram
 *     Tool round from durable (tool_round.create answered) to settled (the
 *     settled barrier acknowledged). start=created: this worker created the
 *     round; start=taken_over: the round was open when this delivery began
 *     (timed from the take-over).
 *   byok_run_early_model_calls_total{outcome}             counter
 *     First model calls sent while run.begin ran (early-model-call.ts):
 *     outcome adopted (the run's first call was exactly that request) or
 *     why it was cancelled unseen: request_differs (the store's history was
 *     not the one assumed), compaction_first, not_reached (the run ended or
 *     stopped before its first call, e.g. run.begin refused it).
 *   byok_run_worker_active_runs                           gauge
 *     Runs in progress on this worker.
 *   byok_jetstream_consumer_pending_messages{stream, consumer}       gauge
 *   byok_jetstream_consumer_ack_pending_messages{stream, consumer}   gauge
 *   byok_jetstream_consumer_redelivered_messages{stream, consumer}   gauge
 *   byok_jetstream_consumer_waiting_pulls{stream, consumer}          gauge
 *     The shared run consumer as the server reports it (consumer-stats.ts):
 *     not yet delivered, delivered but unacknowledged, redelivered and still
 *     unacknowledged, pull requests waiting. Every replica reports the same
 *     consumer: aggregate with max(), not sum().
 */
import { FailureKind } from "@byok/contracts";
import { Counter, Gauge, Histogram, secondsSince, type Registry } from "@byok/platform";
import type { ConsumerReading } from "./consumer-stats.ts";
import type { EarlyCallObserver } from "./early-model-call.ts";
import type { FinalOutcome } from "./run-outcome.ts";
import { assertNever } from "./assert-never.ts";

export type ToolRoundStart = "created" | "taken_over";

export interface RunWorkerMetrics extends EarlyCallObserver {
  runEnded(outcome: FinalOutcome): void;
  /** A tool round settled; `startedMs` is performance.now() when it became durable or was taken over. */
  toolRoundSettled(start: ToolRoundStart, startedMs: number): void;
  consumerRead(reading: ConsumerReading): void;
}

export interface RunWorkerMetricSources {
  readonly activeRuns: () => number;
  readonly stream: string;
  readonly consumer: string;
  /** Called at scrape time before the consumer gauges are read (bounded). */
  readonly refreshConsumer: () => Promise<void>;
}

const FAILURE_KINDS = ["protocol", "provider", "store", "client"] as const;

function failureKindLabel(kind: FailureKind): string {
  switch (kind) {
    case FailureKind.PROTOCOL:
      return "protocol";
    case FailureKind.PROVIDER:
      return "provider";
    case FailureKind.STORE:
      return "store";
    case FailureKind.CLIENT:
      return "client";
    case FailureKind.UNSPECIFIED:
      return "unspecified";
    default:
      return "unknown";
  }
}

export function createRunWorkerMetrics(registry: Registry, sources: RunWorkerMetricSources): RunWorkerMetrics {
  const runs = new Counter({
    name: "byok_runs_total",
    help: "Runs ended by this worker, by outcome and failure kind (none unless failed).",
    labelNames: ["outcome", "failure_kind"],
    registers: [registry],
  });
  // Known combinations start at 0, so rate() sees their first increase.
  runs.inc({ outcome: "completed", failure_kind: "none" }, 0);
  runs.inc({ outcome: "cancelled", failure_kind: "none" }, 0);
  for (const kind of FAILURE_KINDS) runs.inc({ outcome: "failed", failure_kind: kind }, 0);

  const toolRounds = new Histogram({
    name: "byok_tool_round_duration_seconds",
    help: "Tool round duration from durable (created) or taken over to settled.",
    labelNames: ["start"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
    registers: [registry],
  });
  const earlyCalls = new Counter({
    name: "byok_run_early_model_calls_total",
    help: "First model calls sent while run.begin ran: adopted, or why they were cancelled unseen.",
    labelNames: ["outcome"],
    registers: [registry],
  });
  for (const outcome of ["adopted", "request_differs", "compaction_first", "not_reached"]) earlyCalls.inc({ outcome }, 0);
  new Gauge({
    name: "byok_run_worker_active_runs",
    help: "Runs in progress on this worker.",
    registers: [registry],
    collect() {
      this.set(sources.activeRuns());
    },
  });
  const consumerLabels = { stream: sources.stream, consumer: sources.consumer };
  const consumerGauge = (name: string, help: string): Gauge =>
    new Gauge({
      name,
      help,
      labelNames: ["stream", "consumer"],
      registers: [registry],
      async collect() {
        await sources.refreshConsumer();
      },
    });
  const pending = consumerGauge("byok_jetstream_consumer_pending_messages", "Run consumer: messages not yet delivered (server's num_pending).");
  const ackPending = consumerGauge("byok_jetstream_consumer_ack_pending_messages", "Run consumer: messages delivered and not yet acknowledged (num_ack_pending).");
  const redelivered = consumerGauge("byok_jetstream_consumer_redelivered_messages", "Run consumer: messages redelivered and not yet acknowledged (num_redelivered).");
  const waiting = consumerGauge("byok_jetstream_consumer_waiting_pulls", "Run consumer: pull requests waiting at the server (num_waiting).");

  return {
    runEnded(outcome) {
      switch (outcome.kind) {
        case "completed":
        case "cancelled":
          runs.inc({ outcome: outcome.kind, failure_kind: "none" });
          return;
        case "failed":
          runs.inc({ outcome: "failed", failure_kind: failureKindLabel(outcome.failure.kind) });
          return;
        default:
          assertNever(outcome);
      }
    },
    earlyModelCall(outcome) {
      earlyCalls.inc({ outcome });
    },
    toolRoundSettled(start, startedMs) {
      toolRounds.observe({ start }, secondsSince(startedMs));
    },
    consumerRead(reading) {
      pending.set(consumerLabels, reading.pending);
      ackPending.set(consumerLabels, reading.ackPending);
      redelivered.set(consumerLabels, reading.redelivered);
      waiting.set(consumerLabels, reading.waiting);
    },
  };
}
