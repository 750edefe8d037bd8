/**
 * The loop of one run (design/ARCHITECTURE.md §4-5): model call -> final answer
 * or tool round -> model call ... Protocol-agnostic: it sees messages, tool call
 * ids and state events, never a client type or a tool name.
 *
 * History comes from the store (the run's head revision) and is reloaded after
 * every settled tool round, so each model request is built from exactly what
 * the store holds: call n's messages are a prefix of call n+1's, also across a
 * change of owner. A new owner (redelivery) resumes where the store says the
 * run is: an open tool round, an appended but unreported final answer, a
 * settled round awaiting its barrier, or the next model call.
 *
 * Before every model call the context estimate is checked against the budget
 * (context-estimate.ts); over it, the history is compacted first
 * (compaction.ts). A call the endpoint refuses as too long (CONTEXT_OVERFLOW)
 * is answered with one compaction and one retry; a second overflow fails the
 * run with that kind and appends nothing.
 */
import { create } from "@bufbuild/protobuf";
import {
  clientModelCallIndexOf,
  CommitCause,
  CompactionReason,
  FailureKind,
  MessageSchema,
  ModelFailureKind,
  nextProviderCallIndex,
  NO_PROVIDER_CALL,
  parseProviderCallIndex,
  toolRoundId,
  type Message,
  type PreparedRun,
  type ProviderCallIndex,
  type RunId,
  type RunRecord,
  type StateCommitted,
  type ToolRoundRecord,
  type Usage,
} from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { StoreFailure, type BegunRun, type KnownHistory, type StoreClient } from "@byok/store-client";
import { assertNever } from "./assert-never.ts";
import type { ClientChannel } from "./client-channel.ts";
import { compact, repeatedCompactionCommit, type CompactionConfig } from "./compaction.ts";
import { ContextFit } from "./context-fit.ts";
import type { EarlyCallDiscard, EarlyModelCall } from "./early-model-call.ts";
import type { RunWorkerMetrics, ToolRoundStart } from "./metrics.ts";
import type { ForwardedEvent } from "./model-cycle.ts";
import type { ModelInvoker } from "./model-invocation.ts";
import { buildModelRequest, runModelContext, type RunModelContext } from "./model-request.ts";
import type { RunCommandFeed } from "./run-commands.ts";
import { RunHistory } from "./run-history.ts";
import { cycleFailed, failed, storeFailed, type RunOutcome } from "./run-outcome.ts";
import { RunInterrupted, RunStop, settleBarrier } from "./run-stop.ts";
import type { TokenCounter, TokenCounters } from "./token-count.ts";
import { awaitToolRound } from "./tool-round-wait.ts";
import type { StateCommittedInit } from "./tool-round.ts";
import { contextTokens, sumTurnUsage } from "./usage.ts";

export { RunInterrupted, RunSuperseded } from "./run-stop.ts";

export interface EngineDeps {
  readonly store: StoreClient;
  readonly invoker: ModelInvoker;
  readonly client: ClientChannel;
  readonly commands: RunCommandFeed;
  readonly signal: AbortSignal;
  /** Liveness probe interval while the run waits for tool results. */
  readonly probeIntervalMs: number;
  readonly metrics: RunWorkerMetrics;
  readonly log: Logger;
  /** Token counting of this worker (calibrated ratios are shared by its runs). */
  readonly counters: TokenCounters;
  /** undefined = compaction off (overflows fail the run as they are). */
  readonly compaction: CompactionConfig | undefined;
}

type Step =
  | { readonly kind: "model_call" }
  /** `startedMs`: performance.now() when the round became durable (created) or this delivery found it open (taken_over). */
  | { readonly kind: "tool_round"; readonly round: ToolRoundRecord; readonly start: ToolRoundStart; readonly startedMs: number }
  | { readonly kind: "final"; readonly assistant: Message; readonly revisionId: string };

export class RunEngine {
  readonly #deps: EngineDeps;
  readonly #runId: RunId;
  readonly #prepared: PreparedRun;
  readonly #model: RunModelContext;
  readonly #beginCount: number;
  readonly #history: RunHistory;
  readonly #fit: ContextFit;
  /** Highest provider call index used so far (NO_PROVIDER_CALL = none yet). */
  #callIndex: ProviderCallIndex;
  /** Usage of each model call; `undefined` = a call that reported none (or one made by an earlier owner). */
  readonly #usages: Array<Usage | undefined> = [];
  #lastUsage: Usage | undefined;
  /** What run.begin already read (history of the head, open round); undefined = read it here. */
  readonly #begun: BegunRun["next"];
  /** The first call, sent before run.begin answered (early-model-call.ts); used only if it is exactly the first call this engine makes. */
  #early: EarlyModelCall | undefined;

  /** `runId` is `prepared.runId`, parsed by the caller; `begun` is BegunRun.next of the run's begin. */
  constructor(deps: EngineDeps, runId: RunId, prepared: PreparedRun, record: RunRecord, begun?: BegunRun["next"], early?: EarlyModelCall) {
    this.#begun = begun;
    this.#early = early;
    this.#deps = deps;
    this.#runId = runId;
    this.#prepared = prepared;
    this.#history = new RunHistory(deps.store, record.headRevisionId);
    this.#beginCount = record.beginCount;
    this.#callIndex = parseProviderCallIndex(record.providerCallIndex);
    // Calls an earlier owner made are unknown here: their usage cannot be summed.
    if (this.#callIndex !== NO_PROVIDER_CALL) this.#usages.push(undefined);
    // An earlier owner's calls share the early call's index: it cannot be this run's first call.
    if (this.#callIndex !== NO_PROVIDER_CALL) this.#dropEarly("request_differs");
    this.#model = runModelContext(runId, prepared);
    this.#fit = new ContextFit(deps.counters, this.#model, deps.compaction);
  }

  /** Sum over the run's model calls (a field only if every call reported it). */
  get turnUsage(): Usage {
    return sumTurnUsage(this.#usages);
  }

  /** The history this engine last held, whole (for the next run of the conversation on this worker). */
  get knownHistory(): KnownHistory | undefined {
    return this.#history.known;
  }

  /** Runs the loop to its end. Throws RunInterrupted when the run's signal fired. */
  async run(): Promise<RunOutcome> {
    try {
      const begun = this.#begun;
      let open: ToolRoundRecord | undefined;
      if (begun === undefined) {
        // Both reads are independent: one round trip instead of two.
        [, open] = await Promise.all([this.#history.load(this.#history.head), this.#deps.store.getOpenToolRound(this.#runId)]);
      } else {
        this.#history.use(this.#history.head, begun.history);
        open = begun.openRound;
      }
      let step = await this.#recover(open);
      for (;;) {
        switch (step.kind) {
          case "model_call":
            step = await this.#modelCall();
            break;
          case "tool_round":
            step = await this.#toolRound(step);
            break;
          case "final":
            return await this.#final(step.assistant, step.revisionId);
          default:
            return assertNever(step);
        }
      }
    } catch (err) {
      if (err instanceof RunStop) return err.outcome;
      if (err instanceof StoreFailure) {
        this.#deps.log.warn({ err }, "store refused or failed a run operation");
        return storeFailed(err);
      }
      throw err;
    } finally {
      this.#dropEarly("not_reached");
    }
  }

  /** Cancels the early call unseen; its index is never used again (the call id stays unique at the gateway and in the ledger). */
  #dropEarly(reason: EarlyCallDiscard): void {
    const early = this.#early;
    if (early === undefined) return;
    this.#early = undefined;
    early.discard(reason);
    if (this.#callIndex < early.index) this.#callIndex = early.index;
  }

  /** The early call when it is exactly the call to make next (taken once); otherwise it is dropped. */
  #takeEarly(): EarlyModelCall | undefined {
    const early = this.#early;
    if (early === undefined) return undefined;
    if (early.index === nextProviderCallIndex(this.#callIndex) && early.matches(buildModelRequest(this.#model, this.#history.messages, early.index))) {
      this.#early = undefined;
      return early;
    }
    this.#dropEarly("request_differs");
    return undefined;
  }

  /** Where the store says the run stands (first delivery: at its start). */
  async #recover(open: ToolRoundRecord | undefined): Promise<Step> {
    const runId = this.#runId;
    if (open !== undefined) {
      this.#deps.log.info({ round_id: open.roundId, results: open.results.length }, "continuing the open tool round");
      return { kind: "tool_round", round: open, start: "taken_over", startedMs: performance.now() };
    }
    const action = this.#prepared.action;
    const pending = action.case === "resume" ? action.value.pendingAssistant : undefined;
    if (pending !== undefined && this.#callIndex === NO_PROVIDER_CALL) {
      // The client's staged-but-unsettled response: its tools run before any model call.
      const created = await this.#deps.store.createToolRound({
        runId,
        roundId: toolRoundId(runId, NO_PROVIDER_CALL),
        expectedHeadRevisionId: this.#history.head,
        assistant: pending,
        providerCallIndex: NO_PROVIDER_CALL,
      });
      return { kind: "tool_round", round: created.round, start: "created", startedMs: performance.now() };
    }
    if (this.#callIndex !== NO_PROVIDER_CALL) {
      const last = this.#history.messages.at(-1);
      if (last?.body.case === "assistant" && !last.body.value.content.some((p) => p.part.case === "toolCall")) {
        this.#deps.log.info("final answer already committed by an earlier owner");
        return { kind: "final", assistant: last, revisionId: this.#history.head };
      }
      const compacted = this.#history.compactedHead;
      if (compacted !== undefined) {
        // The run compacted under an earlier owner; the client may not have checkpointed it yet.
        const { head, messages } = this.#history;
        await this.#commit({ ...repeatedCompactionCommit(head, compacted.sourceRevisionId, compacted.summarizedCount, messages), ...this.#usageSnapshot() });
        return { kind: "model_call" };
      }
      if (last?.body.case === "toolResult") {
        // The last round settled under an earlier owner; the client may not have projected it yet.
        await this.#commit({ cause: CommitCause.TOOL_ROUND_SETTLED, revisionId: this.#history.head, roundId: toolRoundId(runId, this.#callIndex), ...this.#usageSnapshot() });
      }
    }
    return { kind: "model_call" };
  }

  async #modelCall(): Promise<Step> {
    const { store, invoker, client, signal } = this.#deps;
    const runId = this.#runId;
    await this.#fitBudget();
    let overflowCompacted = false;
    for (;;) {
      // First, so that an early call dropped here has retired its index before this call takes one.
      const early = this.#takeEarly();
      const index = nextProviderCallIndex(this.#callIndex);
      const request = buildModelRequest(this.#model, this.#history.messages, index);
      this.#callIndex = index;
      const clientIndex = clientModelCallIndexOf(index);
      // The call's id as a field of its lines rather than a child logger per call (a pino child serializes its bindings when made).
      const log = this.#deps.log;
      const callId = request.callId;
      log.info({ call_id: callId, messages: request.messages.length, early: early !== undefined }, "model call");
      const forward = (event: ForwardedEvent): void => client.emit(clientIndex, event);
      const outcome = await (early === undefined ? invoker.invoke(request, forward, signal, this.#history.asStored) : early.adopt(forward));
      switch (outcome.kind) {
        case "cancelled":
          throw new RunInterrupted("model call cancelled");
        case "failed":
          this.#usages.push(outcome.failure.usage);
          log.warn({ call_id: callId, origin: outcome.failure.origin, kind: ModelFailureKind[outcome.failure.kind], message: outcome.failure.message, partial_chars: outcome.failure.partialText.length }, "model call failed");
          if (outcome.failure.kind === ModelFailureKind.CONTEXT_OVERFLOW && this.#deps.compaction !== undefined) {
            if (overflowCompacted) throw new RunStop(failed(FailureKind.PROVIDER, `context overflow after compaction: ${outcome.failure.message}`, { modelFailureKind: ModelFailureKind.CONTEXT_OVERFLOW }));
            overflowCompacted = true;
            // The endpoint counted more than the estimate: compact whatever the estimate says, then retry once.
            if (await this.#compact(CompactionReason.OVERFLOW, await this.#fit.counter(this.#history.messages))) continue;
          }
          throw new RunStop(cycleFailed(outcome.failure));
        case "completed":
          break;
        default:
          return assertNever(outcome);
      }
      this.#usages.push(outcome.usage);
      this.#lastUsage = outcome.usage;
      const inputTokens = outcome.usage?.inputTokens;
      if (inputTokens !== undefined) this.#measured(Number(inputTokens));
      log.info({ call_id: callId, stop: outcome.stop, tool_calls: outcome.toolCalls.length }, "model call completed");
      // Before the store's round trip: the client can prepare the commit (and no delta waits in the coalescer meanwhile).
      client.emit(clientIndex, { case: "responseComplete", value: outcome.assistant });
      const measured = inputTokens === undefined ? {} : { requestInputTokens: inputTokens };
      switch (outcome.stop) {
        case "stop": {
          const assistant = create(MessageSchema, { body: { case: "assistant", value: outcome.assistant } });
          const { revisionId, messageIds } = await store.appendMessages({ runId, expectedHeadRevisionId: this.#history.head, messages: [assistant], providerCallIndex: index, ...measured });
          this.#history.appended(revisionId, [assistant], messageIds);
          return { kind: "final", assistant, revisionId };
        }
        case "tool_use": {
          const created = await store.createToolRound({
            runId,
            roundId: toolRoundId(runId, index),
            expectedHeadRevisionId: this.#history.head,
            assistant: outcome.assistant,
            providerCallIndex: index,
            ...measured,
          });
          return { kind: "tool_round", round: created.round, start: "created", startedMs: performance.now() };
        }
        default:
          return assertNever(outcome.stop);
      }
    }
  }

  /** Compacts first when the next call's estimate is over the budget. */
  async #fitBudget(): Promise<void> {
    const over = await this.#fit.overBudget(this.#history.messages, this.#history.anchor);
    if (over === undefined) return;
    this.#deps.log.info({ estimate: over.estimate, budget: over.budget.budget, window: over.budget.window, anchored: this.#history.anchor !== undefined }, "context estimate over the budget");
    await this.#compact(CompactionReason.BUDGET, over.counter);
  }

  /** One compaction; false when there was nothing to summarize. Throws RunStop when the summary call failed. */
  async #compact(reason: CompactionReason, counter: TokenCounter): Promise<boolean> {
    const config = this.#deps.compaction;
    const budget = this.#fit.budget;
    if (config === undefined || budget === undefined) return false;
    this.#dropEarly("compaction_first");
    const index = nextProviderCallIndex(this.#callIndex);
    this.#callIndex = index;
    const outcome = await compact(
      {
        store: this.#deps.store,
        invoker: this.#deps.invoker,
        client: this.#deps.client,
        signal: this.#deps.signal,
        config,
        log: this.#deps.log,
        commit: (state) => this.#commit(state),
        usageSnapshot: () => ({ turnUsage: this.turnUsage }),
      },
      { run: this.#model, reason, index, head: this.#history.head, history: this.#history.messages, messageIds: this.#history.messageIds, budget, counter },
    );
    switch (outcome.kind) {
      case "cancelled":
        throw new RunInterrupted("compaction cancelled");
      case "failed":
        this.#usages.push(outcome.failure.usage);
        this.#deps.log.warn({ kind: ModelFailureKind[outcome.failure.kind], message: outcome.failure.message }, "summary call failed");
        throw new RunStop(cycleFailed({ ...outcome.failure, message: `compaction failed: ${outcome.failure.message}` }));
      case "nothing_to_summarize":
        this.#deps.log.info("nothing to compact: the whole history is the newest turn");
        return false;
      case "compacted":
        // The summary call counts in the turn's usage, but it measured another request: no anchor.
        this.#usages.push(outcome.usage);
        await this.#history.load(outcome.revisionId);
        return true;
      default:
        return assertNever(outcome);
    }
  }

  /** The provider's count of the request just made: the in-run anchor, and a calibration of the ratio counter. */
  #measured(inputTokens: number): void {
    this.#history.anchor = { messageCount: this.#history.messages.length, inputTokens };
    this.#fit.calibrate(this.#history.messages, inputTokens);
  }

  async #toolRound(step: Extract<Step, { kind: "tool_round" }>): Promise<Step> {
    const { store, client, commands, signal, probeIntervalMs, log } = this.#deps;
    const revisionId = await awaitToolRound(
      {
        runId: this.#runId,
        store,
        client,
        commands,
        signal,
        probeIntervalMs,
        log,
        beginCount: this.#beginCount,
        commit: (state) => this.#commit(state),
        usageSnapshot: () => this.#usageSnapshot(),
      },
      step.round,
    );
    this.#deps.metrics.toolRoundSettled(step.start, step.startedMs);
    await this.#history.load(revisionId);
    return { kind: "model_call" };
  }

  async #final(assistant: Message, revisionId: string): Promise<RunOutcome> {
    await this.#commit({ cause: CommitCause.FINAL_ANSWER, revisionId, appended: [assistant], ...this.#usageSnapshot() });
    return { kind: "completed", usage: this.turnUsage };
  }

  /** A StateCommitted barrier: returns once the client projected it, else stops the run. */
  async #commit(state: StateCommittedInit): Promise<void> {
    settleBarrier(await this.#deps.client.barrier({ event: { case: "stateCommitted", value: state } }, this.#deps.signal), "state", this.#deps.log);
  }

  #usageSnapshot(): Pick<StateCommitted, "turnUsage" | "contextTokens"> {
    return { turnUsage: this.turnUsage, contextTokens: contextTokens(this.#lastUsage) };
  }
}
