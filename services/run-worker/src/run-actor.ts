/**
 * One delivery of a PreparedRun, from run.begin to the acknowledgement
 * (design/ARCHITECTURE.md §4). The actor owns the run's lifecycle: it takes
 * ownership in the store, cancels the run it superseded, keeps the JetStream
 * message in progress, listens to the run's commands, lets the engine loop,
 * then records the outcome (run.finish, retried while the store is
 * unavailable), reports the terminal state event and acks. A run left behind
 * at shutdown is nak'ed for another worker; a run whose end the store could
 * not record is nak'ed with a delay, and a later delivery finishes it.
 */
import { fromBinary } from "@bufbuild/protobuf";
import type { JetStreamClient, JsMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  FailureKind,
  isRunId,
  PreparedRunSchema,
  RunStatus,
  type BusNames,
  type PreparedRun,
  type PromptSpec,
  type RunId,
  type RunRecord,
  type Usage,
} from "@byok/contracts";
import type { DeltaWindow } from "@byok/model-stream";
import { BusPayloads, PayloadFailure, ToolSetFailure, type Logger, type ToolSets } from "@byok/platform";
import { StoreFailure, type BegunRun, type StoreClient } from "@byok/store-client";
import { ClientChannel } from "./client-channel.ts";
import type { CompactionConfig } from "./compaction.ts";
import type { TokenCounters } from "./token-count.ts";
import { clientGoneNow } from "./client-liveness.ts";
import { earlyCallSlot, type EarlyCallSlot } from "./early-model-call.ts";
import { RunEngine, RunInterrupted, RunSuperseded } from "./engine.ts";
import type { RunWorkerMetrics } from "./metrics.ts";
import type { ModelInvoker } from "./model-invocation.ts";
import { runModelContext } from "./model-request.ts";
import { beginRun } from "./run-begin.ts";
import { openRunCommandFeed, type RunCommandFeed } from "./run-commands.ts";
import { finishOnce, finishRequest, retryFinish } from "./run-finish.ts";
import type { RecentHistories } from "./recent-histories.ts";
import { failed, outcomeOfRecord, statusOf, stopped, terminalEvent, withClientsReason, type FinalOutcome, type RunOutcome, type RunStopReason } from "./run-outcome.ts";
import { assertNever } from "./assert-never.ts";

/** How long a run cancelled for a silent client waits for one more read of its commands. */
const STOP_READ_TIMEOUT_MS = 1_000;

export interface RunActorDeps {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly names: BusNames;
  readonly store: StoreClient;
  readonly invoker: ModelInvoker;
  readonly stateAckTimeoutMs: number;
  /** The window every run's deltas are joined in (client-channel.ts), shared by the runs of this worker; undefined = off. */
  readonly clientDeltaWindow?: DeltaWindow;
  readonly workingIntervalMs: number;
  readonly maxDeliver: number;
  /** Liveness probe interval while a run waits for its client. */
  readonly probeIntervalMs: number;
  /** How long run.finish is retried while the store is unavailable. */
  readonly finishRetryMs: number;
  readonly metrics: RunWorkerMetrics;
  readonly log: Logger;
  readonly counters: TokenCounters;
  /** undefined = compaction off. */
  readonly compaction: CompactionConfig | undefined;
  /** Histories this worker held, per conversation (run.begin then sends only what is new). */
  readonly recent: RecentHistories;
  /** A run's tool set named by digest, from this worker's cache or the TOOL_SETS stream. */
  readonly toolSets: ToolSets;
  /** Send a first delivery's first model call while run.begin runs, when its history is known (early-model-call.ts). */
  readonly earlyModelCall: boolean;
}

/**
 * What happens to the JetStream message once the actor is done with it: ack
 * (the run ended), hand_over (redeliver now, to another worker), retry_later
 * (redeliver after a pause: a dependency is down), term (undecodable),
 * leave (a later delivery of the same message owns the run: it settles it).
 */
type Settlement = "ack" | "hand_over" | "retry_later" | "term" | "leave";

const RETRY_DELAY_MS = 2_000;
const deliveryBindings = (msg: JsMsg) => ({ stream_seq: msg.seq, delivery: msg.info.deliveryCount });

export class RunActor {
  readonly #deps: RunActorDeps;
  readonly #msg: JsMsg;
  readonly #abort = new AbortController();
  #stopReason: RunStopReason | undefined;
  /** The run's logger, made once its id is read (an error line before that makes one with the delivery's bindings alone). */
  #runLog: Logger | undefined;
  /** This owner's begin (run.begin's count), sent with run.finish; 0 before run.begin answered. */
  #beginCount = 0;

  constructor(deps: RunActorDeps, msg: JsMsg) {
    this.#deps = deps;
    this.#msg = msg;
  }

  get #log(): Logger {
    return (this.#runLog ??= this.#deps.log.child(deliveryBindings(this.#msg)));
  }

  /** Stop the run: cancel it (client commands) or let go of it (shutdown). The first reason wins. */
  stop(reason: RunStopReason): void {
    if (this.#stopReason !== undefined) return;
    this.#stopReason = reason;
    this.#abort.abort();
  }

  /** Handles the delivery to its end; never throws. */
  async run(): Promise<void> {
    const msg = this.#msg;
    const working = setInterval(() => msg.working(), this.#deps.workingIntervalMs);
    let settlement: Settlement;
    try {
      settlement = await this.#handle();
    } catch (err) {
      this.#log.error({ err }, "run actor failed unexpectedly; leaving the run to redelivery");
      settlement = "retry_later";
    } finally {
      clearInterval(working);
    }
    try {
      switch (settlement) {
        case "ack":
          // Fire and forget (no ack of the ack: one reply less per run). A lost ack only
          // redelivers the run, and that delivery finds it ended in the store and acks again.
          msg.ack();
          break;
        case "hand_over":
          msg.nak();
          break;
        case "retry_later":
          msg.nak(RETRY_DELAY_MS);
          break;
        case "term":
          msg.term();
          break;
        case "leave":
          break;
        default:
          assertNever(settlement);
      }
    } catch (err) {
      this.#log.warn({ err, settlement }, "could not settle the run message");
    }
  }

  async #handle(): Promise<Settlement> {
    let data: Uint8Array;
    try {
      // A run too large for one NATS message (e.g. a user message with large images): its payload stays for redeliveries.
      data = await BusPayloads.of(this.#deps.nc, this.#deps.names).incoming(this.#msg, { keep: true });
    } catch (err) {
      if (!(err instanceof PayloadFailure)) throw err;
      this.#log.error({ err }, err.kind === "missing" ? "dropping a PreparedRun whose payload is gone" : "cannot read the PreparedRun's payload; retrying later");
      return err.kind === "missing" ? "term" : "retry_later";
    }
    let prepared: PreparedRun;
    try {
      prepared = fromBinary(PreparedRunSchema, data);
    } catch (err) {
      this.#log.error({ err }, "dropping an undecodable PreparedRun");
      return "term";
    }
    const runId = prepared.runId;
    if (!isRunId(runId) || prepared.conversationId === "") {
      this.#log.error({ run_id: runId }, "dropping a PreparedRun without a valid run_id or without conversation_id");
      return "term";
    }
    this.#runLog = this.#deps.log.child({ ...deliveryBindings(this.#msg), run_id: runId, conversation_id: prepared.conversationId });
    // run.begin goes out first (the model call waits for it; a consumer created ahead of it on the
    // bus delays it). The command feed's consumer is created right behind it and nothing waits
    // for it: commands are durable and the feed reads from the run's first one, so a command
    // sent before the consumer exists is not lost.
    const begun = beginRun(this.#deps, runId, prepared, this.#log);
    // Awaited (and its failure handled) in #handleRun; this only keeps a rejection from counting as unhandled meanwhile.
    begun.catch(() => undefined);
    // The run's tool set (usually cached) is read while run.begin runs; the model call needs both.
    const prompt = prepared.prompt === undefined ? Promise.resolve(undefined) : this.#deps.toolSets.resolve(prepared.prompt);
    prompt.catch(() => undefined);
    const early = earlyCallSlot(this.#deps, this.#log, { run: runModelContext(runId, prepared), prepared, deliveryCount: this.#msg.info.deliveryCount, runSignal: this.#abort.signal });
    const feed = this.#openCommandFeed(runId);
    try {
      return await this.#handleRun(runId, prepared, begun, prompt, feed, early);
    } finally {
      early?.close();
      await feed.close().catch((err: unknown) => this.#log.warn({ err }, "closing the command feed failed"));
    }
  }

  #openCommandFeed(runId: RunId): RunCommandFeed {
    return openRunCommandFeed({
      nc: this.#deps.nc,
      js: this.#deps.js,
      names: this.#deps.names,
      runId,
      onStop: (command) => {
        this.#log.info({ command: command.kind }, "run stop requested by the client");
        this.stop(command.kind === "cancel" ? { kind: "cancel_command", reason: command.reason } : { kind: "client_closed", error: command.error, failureKind: command.failureKind });
      },
      log: this.#log,
    });
  }

  async #handleRun(
    runId: RunId,
    prepared: PreparedRun,
    begun: Promise<BegunRun>,
    prompt: Promise<PromptSpec | undefined>,
    commands: RunCommandFeed,
    early: EarlyCallSlot | undefined,
  ): Promise<Settlement> {
    const client = new ClientChannel(this.#deps.nc, this.#deps.names, runId, this.#deps.stateAckTimeoutMs, this.#log, { window: this.#deps.clientDeltaWindow });
    const lastDelivery = this.#msg.info.deliveryCount >= this.#deps.maxDeliver;

    let record: RunRecord;
    let next: BegunRun["next"];
    try {
      ({ run: record, next } = await begun);
    } catch (err) {
      if (!(err instanceof StoreFailure)) throw err;
      if (err.kind === "unavailable" && !lastDelivery) {
        this.#log.warn({ err }, "store unavailable at run.begin; retrying later");
        return "retry_later";
      }
      this.#log.error({ err }, "run.begin failed");
      const outcome = failed(FailureKind.STORE, err.message);
      this.#deps.metrics.runEnded(outcome);
      await client.terminal(terminalEvent(outcome));
      return "ack";
    }
    this.#runLog = this.#log.child({ begin_count: record.beginCount });
    this.#beginCount = record.beginCount;

    if (record.status !== RunStatus.RUNNING) {
      this.#log.info({ status: RunStatus[record.status] }, "run already ended; reporting its terminal again");
      await client.terminal(terminalEvent(outcomeOfRecord(record)));
      return "ack";
    }
    // The store counts the deliveries that reached run.begin; JetStream's own
    // count is not reliable on every server version (a nak after an abandoned
    // pull restarts it at 1), so the larger of both decides.
    const deliveries = Math.max(this.#msg.info.deliveryCount, record.beginCount);
    const finalDelivery = deliveries >= this.#deps.maxDeliver;
    if (finalDelivery) {
      const outcome = failed(FailureKind.PROTOCOL, `run abandoned after ${deliveries} deliveries`);
      this.#log.error("last delivery of a run that never finished: failing it");
      return this.#finish(outcome, undefined, client, runId, finalDelivery);
    }
    if (this.#stopReason !== undefined) {
      // Stopped while run.begin ran (a command can arrive before it answers): a shutdown leaves the
      // run to another worker, a cancel or close ends it here (a redelivery would read it again).
      const outcome = stopped(this.#stopReason);
      if (outcome.kind === "abandoned") return "hand_over";
      return this.#finish(outcome, undefined, client, runId, finalDelivery);
    }
    if (record.beginCount > 1) {
      // An earlier owner may have ended the run for a client that has gone since (its end not recorded):
      // do not make model calls for nobody.
      const gone = await clientGoneNow(client, this.#deps.probeIntervalMs);
      if (gone !== undefined) {
        this.#log.info({ reason: gone }, "client of the redelivered run is gone");
        return this.#finish({ kind: "cancelled", reason: `client gone: ${gone}` }, undefined, client, runId, finalDelivery);
      }
    }

    try {
      const resolved = await prompt;
      if (resolved !== undefined) prepared.prompt = resolved;
    } catch (err) {
      if (!(err instanceof ToolSetFailure)) throw err;
      if (err.kind === "unreachable" && !finalDelivery) {
        this.#log.warn({ err }, "the run's tool set cannot be read; retrying later");
        return "retry_later";
      }
      this.#log.error({ err }, "the run's tool set is missing");
      return this.#finish(failed(FailureKind.PROTOCOL, err.message), undefined, client, runId, finalDelivery);
    }

    const engine = new RunEngine(
      {
        store: this.#deps.store,
        invoker: this.#deps.invoker,
        client,
        commands,
        signal: this.#abort.signal,
        probeIntervalMs: this.#deps.probeIntervalMs,
        metrics: this.#deps.metrics,
        log: this.#log,
        counters: this.#deps.counters,
        compaction: this.#deps.compaction,
      },
      runId,
      prepared,
      record,
      next,
      early?.take(),
    );
    let outcome: RunOutcome;
    try {
      outcome = await engine.run();
      // Before the feed closes: the client may have said why it went silent (withClientsReason).
      if (outcome.kind === "cancelled" && this.#stopReason === undefined) await commands.readNow(STOP_READ_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof RunSuperseded) {
        this.#log.warn({ begin_count: err.beginCount, current_begin_count: err.currentBeginCount }, "a later delivery of this run owns it now; stopping without a model call");
        return "leave";
      }
      if (err instanceof RunInterrupted && this.#stopReason !== undefined) {
        outcome = stopped(this.#stopReason);
      } else {
        this.#log.error({ err }, "run engine failed unexpectedly");
        outcome = failed(FailureKind.PROTOCOL, `internal error in the run worker: ${(err as Error).message}`);
      }
    } finally {
      // Not awaited: the run's end does not wait for it (#handle awaits the same close before the message is settled).
      void commands.close().catch((err: unknown) => this.#log.warn({ err }, "closing the command feed failed"));
      const known = engine.knownHistory;
      if (known !== undefined) this.#deps.recent.set(prepared.conversationId, known);
    }
    if (outcome.kind === "abandoned") {
      this.#log.info({ reason: outcome.reason }, "leaving the run to another worker");
      return "hand_over";
    }
    return this.#finish(withClientsReason(outcome, this.#stopReason), engine.turnUsage, client, runId, finalDelivery);
  }

  /**
   * run.finish and the one terminal state event. A completed run got here
   * through the FINAL_ANSWER barrier (its answer appended, the client's
   * checkpoint acknowledged), so its terminal goes out with run.finish, not
   * after it: the client's end does not wait for the record, the message's ack
   * does. While the store is unavailable run.finish is retried with backoff: a
   * completed run until it is recorded or the worker stops (a later delivery
   * would find its client gone and could only record a cancel), any other for
   * `finishRetryMs`, its terminal sent at once. A failed or cancelled run is
   * otherwise reported as the store recorded it. Still unrecorded: the message
   * is left to a later delivery (which finds the final answer, or the client
   * gone, and finishes the run), except on the final delivery, which reports
   * what it has.
   */
  async #finish(outcome: FinalOutcome, usage: Usage | undefined, client: ClientChannel, runId: RunId, finalDelivery: boolean): Promise<Settlement> {
    const request = finishRequest(runId, outcome, usage, this.#beginCount);
    // run.finish is sent first: it reaches the store before the client can start its next turn.
    const finishing = finishOnce(this.#deps.store, request);
    const told = outcome.kind === "completed" ? client.terminal(terminalEvent(outcome)) : undefined;
    let terminalSent = told !== undefined;
    let result = await finishing;
    if (result.kind === "unavailable") {
      if (!terminalSent) {
        await client.terminal(terminalEvent(outcome));
        terminalSent = true;
      }
      this.#log.warn({ err: result.error }, "run.finish: store unavailable; retrying");
      result = await retryFinish(this.#deps.store, request, told === undefined ? this.#deps.finishRetryMs : Number.POSITIVE_INFINITY, () => this.#stopReason?.kind === "shutdown");
    }
    let final: FinalOutcome = outcome;
    switch (result.kind) {
      case "recorded":
        // The store keeps the first terminal status (e.g. a run superseded meanwhile is cancelled);
        // a completed run's client was told already (it has its answer and checkpoint).
        if (result.run.status !== statusOf(outcome)) final = outcomeOfRecord(result.run);
        break;
      case "unavailable":
        if (!finalDelivery) {
          this.#log.warn({ err: result.error }, "run.finish still failing; leaving the run to a later delivery");
          await told;
          return "retry_later";
        }
        this.#log.error({ err: result.error }, "run.finish failed on the final delivery");
        if (outcome.kind === "completed") final = failed(FailureKind.STORE, result.error.message);
        break;
      case "superseded":
        // A later delivery began the run meanwhile: it owns the run's end and its report.
        this.#log.warn({ err: result.error }, "a later delivery of this run owns it now; not finishing it");
        await told;
        return "leave";
      case "refused":
        this.#log.error({ err: result.error }, "run.finish failed");
        if (outcome.kind === "completed") final = failed(FailureKind.STORE, result.error.message);
        break;
      default:
        assertNever(result);
    }
    this.#log.info({ outcome: final.kind, ...(final.kind === "failed" ? { failure_kind: FailureKind[final.failure.kind], message: final.failure.message } : {}) }, "run ended");
    this.#deps.metrics.runEnded(final);
    if (!terminalSent) await client.terminal(terminalEvent(final));
    await told;
    return "ack";
  }
}
