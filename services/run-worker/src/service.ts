/**
 * The run worker: takes PreparedRuns off the work queue and runs each in a
 * RunActor, up to MAX_CONCURRENT_RUNS at once. Tests and the supervisor start
 * it in-process with `startRunWorker(config)`.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { jetstream, type JsMsg } from "@nats-io/jetstream";
import { busNames } from "@byok/contracts";
import { connectNats, createLogger, createMetricsRegistry, natsToolSetStore, startOpsServer, ToolSets, type Logger, type OpsServer } from "@byok/platform";
import type { RunWorkerConfig } from "./config.ts";
import { ConsumerStats } from "./consumer-stats.ts";
import { createRunWorkerMetrics } from "./metrics.ts";
import { busModelInvoker } from "./model-invocation.ts";
import { RecentHistories } from "./recent-histories.ts";
import { RunActor } from "./run-actor.ts";
import { startRunQueue } from "./run-queue.ts";
import { TokenCounters } from "./token-count.ts";
import { StoreClient } from "@byok/store-client";
import { DeltaWindow } from "@byok/model-stream";
import { systemClock } from "@byok/platform/clock";

export interface RunWorker {
  readonly workerId: string;
  /** http://host:port of the ops listener (/metrics, /healthz); undefined without METRICS_PORT. */
  readonly opsUrl: string | undefined;
  /** Deliveries this worker has taken so far (each is one run attempt). */
  runsTaken(): number;
  /** Runs in progress on this worker. */
  activeRuns(): number;
  /**
   * Stop taking runs and let go of the ones in progress: they are handed back
   * to the queue (nak) without a terminal, and another worker continues them
   * from the store.
   */
  stop(): Promise<void>;
}

export interface RunWorkerOverrides {
  readonly log?: Logger;
}

export async function startRunWorker(config: RunWorkerConfig, overrides: RunWorkerOverrides = {}): Promise<RunWorker> {
  const workerId = config.workerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
  const log = (overrides.log ?? createLogger({ service: "run-worker", level: config.logLevel, debugContent: config.logDebugContent })).child({
    worker_id: workerId,
  });
  const nc = await connectNats(config.natsUrl, `run-worker ${workerId}`, log);
  const names = busNames(config.busPrefix);
  const js = jetstream(nc);
  const active = new Set<RunActor>();
  /** Bound on the scrape-time read of the consumer info (the last values stay otherwise). */
  const scrapeReadBudgetMs = 2_000;
  const registry = createMetricsRegistry("run-worker", config.metrics);
  const consumerStats = new ConsumerStats({
    nc,
    stream: names.runsStream,
    consumer: names.runWorkersConsumer,
    intervalMs: config.consumerPollMs,
    onReading: (reading) => metrics.consumerRead(reading),
    log,
  });
  const metrics = createRunWorkerMetrics(registry, {
    activeRuns: () => active.size,
    stream: names.runsStream,
    consumer: names.runWorkersConsumer,
    refreshConsumer: () => consumerStats.refresh(scrapeReadBudgetMs),
  });
  const counters = new TokenCounters();
  const actorDeps = {
    nc,
    js,
    names,
    store: new StoreClient(nc, names, { timeoutMs: config.storeTimeoutMs }),
    invoker: busModelInvoker({ nc, names, idleTimeoutMs: config.modelIdleTimeoutMs, log }),
    stateAckTimeoutMs: config.stateAckTimeoutMs,
    clientDeltaWindow: new DeltaWindow(systemClock, config.clientDeltaCoalesceMs),
    workingIntervalMs: config.runWorkingIntervalMs,
    maxDeliver: config.runMaxDeliver,
    probeIntervalMs: config.probeIntervalMs,
    finishRetryMs: config.runFinishRetryMs,
    metrics,
    log,
    counters,
    compaction: config.compaction,
    recent: new RecentHistories(),
    toolSets: new ToolSets(natsToolSetStore(nc, names), log.child({ component: "tool-sets" })),
    earlyModelCall: config.earlyModelCall,
  };
  const finished = new Set<Promise<void>>();
  let taken = 0;

  const onRun = (msg: JsMsg): Promise<void> => {
    taken += 1;
    const actor = new RunActor(actorDeps, msg);
    active.add(actor);
    const done = actor.run().finally(() => {
      active.delete(actor);
      finished.delete(done);
    });
    finished.add(done);
    return done;
  };

  let queue;
  let ops: OpsServer | undefined;
  try {
    ops = await startOpsServer({ config: config.metrics, registry, log, healthy: () => !nc.isClosed(), nats: () => nc });
    queue = await startRunQueue({
      nc,
      js,
      names,
      ackWaitMs: config.runAckWaitMs,
      maxDeliver: config.runMaxDeliver,
      streamReplicas: config.streamReplicas,
      maxConcurrentRuns: config.maxConcurrentRuns,
      log,
      onRun,
    });
  } catch (err) {
    await ops?.stop();
    await nc.close();
    throw err;
  }
  const opsServer = ops;
  if (opsServer.url !== undefined) consumerStats.start();
  log.info({ max_concurrent_runs: config.maxConcurrentRuns }, "run worker taking runs");

  let stopping: Promise<void> | undefined;
  return {
    workerId,
    opsUrl: opsServer.url,
    runsTaken: () => taken,
    activeRuns: () => active.size,
    stop() {
      stopping ??= (async () => {
        await queue.stopTaking();
        for (const actor of active) actor.stop({ kind: "shutdown" });
        await Promise.allSettled([...finished]);
        consumerStats.stop();
        await nc.drain().catch(() => nc.close());
        await opsServer.stop();
        await counters.close();
        log.info("run worker stopped");
      })();
      return stopping;
    },
  };
}
