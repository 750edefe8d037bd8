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
  type ToolCallPart,
  type ToolRoundRecord,
  type Usage,
} from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { StoreFailure, type BegunRun, type KnownHistory, type RevisionHistory, type StoreClient } from "@byok/store-client";
import type { BarrierOutcome, ClientChannel } from "./client-channel.ts";
import { compact, repeatedCompactionCommit, type CompactionConfig } from "./compaction.ts";
import { contextBudget, estimateInputTokens, messageText, promptTexts, requestBytes, type ContextAnchor } from "./context-estimate.ts";
import type { RunWorkerMetrics, ToolRoundStart } from "./metrics.ts";
import { buildModelRequest, type RunModelContext } from "./model-request.ts";
import { byteRatioCounter, type TokenCounter, type TokenCounters } from "./token-count.ts";

/** An upper bound of BPE counts (every token is at least one byte). */
const ONE_TOKEN_PER_BYTE = byteRatioCounter(1);
import type { ModelInvoker } from "./model-invocation.ts";
import type { RunCommandFeed } from "./run-commands.ts";
import { cycleFailed, failed, storeFailed, type RunOutcome } from "./run-outcome.ts";
import { watchClientLiveness } from "./client-liveness.ts";
import { driveToolRound, type StateCommittedInit } from "./tool-round.ts";
import { contextTokens, sumTurnUsage } from "./usage.ts";
import { assertNever } from "./assert-never.ts";

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

/** Ends the loop with an outcome decided inside it (client gone, client rejected a state). */
class RunStop extends Error {
  override readonly name = "RunStop";
  readonly outcome: RunOutcome;
  constructor(outcome: RunOutcome) {
    super(outcome.kind);
    this.outcome = outcome;
  }
}

/** The run's cancellation signal fired; the actor decides what that means. */
export class RunInterrupted extends Error {
  override readonly name = "RunInterrupted";
}

/**
 * A later delivery of the same run began (the store's begin count grew past
 * this owner's): that delivery owns the run now. This one stops without
 * ending the run, reporting anything or settling the JetStream message.
 */
export class RunSuperseded extends Error {
  override readonly name = "RunSuperseded";
  readonly beginCount: number;
  readonly currentBeginCount: number;
  constructor(beginCount: number, currentBeginCount: number) {
    super(`run begun again (begin ${currentBeginCount}) while this owner (begin ${beginCount}) ran it`);
    this.beginCount = beginCount;
    this.currentBeginCount = currentBeginCount;
  }
}

export class RunEngine {
  readonly #deps: EngineDeps;
  readonly #runId: RunId;
  readonly #prepared: PreparedRun;
  readonly #model: RunModelContext;
  readonly #beginCount: number;
  readonly #log: Logger;
  #head: string;
  #history: Message[] = [];
  /** Stored ids of #history's messages. */
  #messageIds: string[] = [];
  /** The newest provider measurement of a prefix of #history. */
  #anchor: ContextAnchor | undefined;
  /** Set while #head is a compacted revision (recovery re-sends its commit). */
  #compactedHead: { sourceRevisionId: string; summarizedCount: number } | undefined;
  /** Highest provider call index used so far (NO_PROVIDER_CALL = none yet). */
  #callIndex: ProviderCallIndex;
  /** Usage of each model call; `undefined` = a call that reported none (or one made by an earlier owner). */
  readonly #usages: Array<Usage | undefined> = [];
  #lastUsage: Usage | undefined;

  /** The revision #history is the whole history of (undefined until loaded). */
  #known: KnownHistory | undefined;
  /** What run.begin already read (history of the head, open round); undefined = read it here. */
  readonly #begun: BegunRun["next"];

  /** `runId` is `prepared.runId`, parsed by the caller; `begun` is BegunRun.next of the run's begin. */
  constructor(deps: EngineDeps, runId: RunId, prepared: PreparedRun, record: RunRecord, begun?: BegunRun["next"]) {
    this.#begun = begun;
    this.#deps = deps;
    this.#runId = runId;
    this.#prepared = prepared;
    this.#log = deps.log;
    this.#head = record.headRevisionId;
    this.#beginCount = record.beginCount;
    this.#callIndex = parseProviderCallIndex(record.providerCallIndex);
    // Calls an earlier owner made are unknown here: their usage cannot be summed.
    if (this.#callIndex !== NO_PROVIDER_CALL) this.#usages.push(undefined);
    this.#model = {
      runId,
      conversationId: prepared.conversationId,
      memberId: prepared.memberId,
      model: prepared.model,
      prompt: prepared.prompt,
      clientKind: prepared.clientKind,
    };
  }

  /** Sum over the run's model calls (a field only if every call reported it). */
  get turnUsage(): Usage {
    return sumTurnUsage(this.#usages);
  }

  /** Runs the loop to its end. Throws RunInterrupted when the run's signal fired. */
  async run(): Promise<RunOutcome> {
    try {
      const begun = this.#begun;
      let open: ToolRoundRecord | undefined;
      if (begun === undefined) {
        // Both reads are independent: one round trip instead of two.
        [, open] = await Promise.all([this.#loadHistory(this.#head), this.#deps.store.getOpenToolRound(this.#runId)]);
      } else {
        this.#useHistory(this.#head, begun.history);
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
        this.#log.warn({ err }, "store refused or failed a run operation");
        return storeFailed(err);
      }
      throw err;
    }
  }

  /** Where the store says the run stands (first delivery: at its start). */
  async #recover(open: ToolRoundRecord | undefined): Promise<Step> {
    const runId = this.#runId;
    if (open !== undefined) {
      this.#log.info({ round_id: open.roundId, results: open.results.length }, "continuing the open tool round");
      return { kind: "tool_round", round: open, start: "taken_over", startedMs: performance.now() };
    }
    const action = this.#prepared.action;
    const pending = action.case === "resume" ? action.value.pendingAssistant : undefined;
    if (pending !== undefined && this.#callIndex === NO_PROVIDER_CALL) {
      // The client's staged-but-unsettled response: its tools run before any model call.
      const created = await this.#deps.store.createToolRound({
        runId,
        roundId: toolRoundId(runId, NO_PROVIDER_CALL),
        expectedHeadRevisionId: this.#head,
        assistant: pending,
        providerCallIndex: NO_PROVIDER_CALL,
      });
      return { kind: "tool_round", round: created.round, start: "created", startedMs: performance.now() };
    }
    if (this.#callIndex !== NO_PROVIDER_CALL) {
      const last = this.#history.at(-1);
      if (last?.body.case === "assistant" && !last.body.value.content.some((p) => p.part.case === "toolCall")) {
        this.#log.info("final answer already committed by an earlier owner");
        return { kind: "final", assistant: last, revisionId: this.#head };
      }
      if (this.#compactedHead !== undefined) {
        // The run compacted under an earlier owner; the client may not have checkpointed it yet.
        const { sourceRevisionId, summarizedCount } = this.#compactedHead;
        await this.#commit({ ...repeatedCompactionCommit(this.#head, sourceRevisionId, summarizedCount, this.#history), ...this.#usageSnapshot() });
        return { kind: "model_call" };
      }
      if (last?.body.case === "toolResult") {
        // The last round settled under an earlier owner; the client may not have projected it yet.
        await this.#commit({ cause: CommitCause.TOOL_ROUND_SETTLED, revisionId: this.#head, roundId: toolRoundId(runId, this.#callIndex), ...this.#usageSnapshot() });
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
      const index = nextProviderCallIndex(this.#callIndex);
      this.#callIndex = index;
      const clientIndex = clientModelCallIndexOf(index);
      const request = buildModelRequest(this.#model, this.#history, index);
      const log = this.#log.child({ call_id: request.callId });
      log.info({ messages: request.messages.length }, "model call");
      const outcome = await invoker.invoke(request, (event) => client.emit(clientIndex, event), signal);
      switch (outcome.kind) {
        case "cancelled":
          throw new RunInterrupted("model call cancelled");
        case "failed":
          this.#usages.push(outcome.failure.usage);
          log.warn({ origin: outcome.failure.origin, kind: ModelFailureKind[outcome.failure.kind], message: outcome.failure.message, partial_chars: outcome.failure.partialText.length }, "model call failed");
          if (outcome.failure.kind === ModelFailureKind.CONTEXT_OVERFLOW && this.#deps.compaction !== undefined) {
            if (overflowCompacted) throw new RunStop(failed(FailureKind.PROVIDER, `context overflow after compaction: ${outcome.failure.message}`, { modelFailureKind: ModelFailureKind.CONTEXT_OVERFLOW }));
            overflowCompacted = true;
            // The endpoint counted more than the estimate: compact whatever the estimate says, then retry once.
            if (await this.#compact(CompactionReason.OVERFLOW, await this.#counter())) continue;
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
      if (inputTokens !== undefined) this.#measured(inputTokens);
      log.info({ stop: outcome.stop, tool_calls: outcome.toolCalls.length }, "model call completed");
      const measured = inputTokens === undefined ? {} : { requestInputTokens: inputTokens };
      switch (outcome.stop) {
        case "stop": {
          const assistant = create(MessageSchema, { body: { case: "assistant", value: outcome.assistant } });
          const revisionId = await store.appendMessages({ runId, expectedHeadRevisionId: this.#head, messages: [assistant], providerCallIndex: index, ...measured });
          this.#head = revisionId;
          return { kind: "final", assistant, revisionId };
        }
        case "tool_use": {
          const created = await store.createToolRound({
            runId,
            roundId: toolRoundId(runId, index),
            expectedHeadRevisionId: this.#head,
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

  /** A counter for this history (its texts counted in one batch for BPE models). */
  async #counter(): Promise<TokenCounter> {
    const texts = [...promptTexts(this.#model.prompt), ...this.#history.map(messageText)];
    const prompt = this.#deps.compaction?.prompt;
    if (prompt !== undefined) texts.push(prompt.system, prompt.request);
    return this.#deps.counters.counterFor(this.#model.model?.modelId ?? "", this.#model.model?.tokenizer ?? "", texts);
  }

  /**
   * Compacts first when the next call's estimate is over the budget. A BPE
   * token is at least one byte, so when even one token per byte fits, the
   * history fits and the tokenizer is not needed (nor loaded).
   */
  async #fitBudget(): Promise<void> {
    const config = this.#deps.compaction;
    const budget = contextBudget(this.#model.model?.contextWindow, config?.reservePercent ?? 0);
    if (config === undefined || budget === undefined) return;
    if (estimateInputTokens(ONE_TOKEN_PER_BYTE, this.#model.prompt, this.#history, this.#anchor) <= budget.budget) return;
    const counter = await this.#counter();
    const estimate = estimateInputTokens(counter, this.#model.prompt, this.#history, this.#anchor);
    if (estimate <= budget.budget) return;
    this.#log.info({ estimate, budget: budget.budget, window: budget.window, anchored: this.#anchor !== undefined }, "context estimate over the budget");
    await this.#compact(CompactionReason.BUDGET, counter);
  }

  /** One compaction; false when there was nothing to summarize. Throws RunStop when the summary call failed. */
  async #compact(reason: CompactionReason, counter: TokenCounter): Promise<boolean> {
    const config = this.#deps.compaction;
    const budget = contextBudget(this.#model.model?.contextWindow, config?.reservePercent ?? 0);
    if (config === undefined || budget === undefined) return false;
    const index = nextProviderCallIndex(this.#callIndex);
    this.#callIndex = index;
    const outcome = await compact(
      {
        store: this.#deps.store,
        invoker: this.#deps.invoker,
        client: this.#deps.client,
        signal: this.#deps.signal,
        config,
        log: this.#log,
        commit: (state) => this.#commit(state),
        usageSnapshot: () => ({ turnUsage: this.turnUsage }),
      },
      { run: this.#model, reason, index, head: this.#head, history: this.#history, messageIds: this.#messageIds, budget, counter },
    );
    switch (outcome.kind) {
      case "cancelled":
        throw new RunInterrupted("compaction cancelled");
      case "failed":
        this.#usages.push(outcome.failure.usage);
        this.#log.warn({ kind: ModelFailureKind[outcome.failure.kind], message: outcome.failure.message }, "summary call failed");
        throw new RunStop(cycleFailed({ ...outcome.failure, message: `compaction failed: ${outcome.failure.message}` }));
      case "nothing_to_summarize":
        this.#log.info("nothing to compact: the whole history is the newest turn");
        return false;
      case "compacted":
        // The summary call counts in the turn's usage, but it measured another request: no anchor.
        this.#usages.push(outcome.usage);
        await this.#loadHistory(outcome.revisionId);
        return true;
      default:
        return assertNever(outcome);
    }
  }

  /** The provider's count of the request just made: the in-run anchor, and a calibration of the ratio counter. */
  #measured(inputTokens: bigint): void {
    this.#anchor = { messageCount: this.#history.length, inputTokens: Number(inputTokens) };
    const tokenizer = this.#model.model?.tokenizer ?? "";
    if (tokenizer !== "o200k_base" && tokenizer !== "cl100k_base") this.#deps.counters.calibrate(this.#model.model?.modelId ?? "", requestBytes(this.#model.prompt, this.#history), Number(inputTokens));
  }

  /**
   * Nothing but the client bounds the wait for tool results, so the client is
   * probed meanwhile: once it is gone, the wait ends and the run is cancelled.
   */
  async #toolRound(step: Extract<Step, { kind: "tool_round" }>): Promise<Step> {
    const { round } = step;
    const waiting = new AbortController();
    const abortWaiting = (): void => waiting.abort();
    this.#deps.signal.addEventListener("abort", abortWaiting, { once: true });
    if (this.#deps.signal.aborted) waiting.abort();
    let goneReason: string | undefined;
    const liveness = watchClientLiveness(this.#deps.client, this.#deps.probeIntervalMs, this.#log);
    void liveness.gone.then((reason) => {
      goneReason = reason;
      waiting.abort();
    });
    try {
      const settled = await driveToolRound(
        {
          runId: this.#runId,
          store: this.#deps.store,
          commands: this.#deps.commands,
          signal: waiting.signal,
          log: this.#log,
          commit: (state) => this.#commit(state),
          execute: (roundId, calls) => this.#execute(roundId, calls),
          usageSnapshot: () => this.#usageSnapshot(),
          interrupted: () =>
            goneReason !== undefined && !this.#deps.signal.aborted
              ? new RunStop({ kind: "cancelled", reason: `client gone: ${goneReason}` })
              : new RunInterrupted("cancelled while waiting for tool results"),
          beginCount: this.#beginCount,
          superseded: (current) => new RunSuperseded(this.#beginCount, current),
        },
        round,
      );
      this.#deps.metrics.toolRoundSettled(step.start, step.startedMs);
      await this.#loadHistory(settled.revisionId);
      return { kind: "model_call" };
    } finally {
      liveness.stop();
      this.#deps.signal.removeEventListener("abort", abortWaiting);
    }
  }

  async #final(assistant: Message, revisionId: string): Promise<RunOutcome> {
    await this.#commit({ cause: CommitCause.FINAL_ANSWER, revisionId, appended: [assistant], ...this.#usageSnapshot() });
    return { kind: "completed", usage: this.turnUsage };
  }

  /** A StateCommitted barrier: returns once the client projected it, else stops the run. */
  async #commit(state: StateCommittedInit): Promise<void> {
    this.#settle(await this.#deps.client.barrier({ event: { case: "stateCommitted", value: state } }, this.#deps.signal), "state");
  }

  async #execute(roundId: string, calls: ToolCallPart[]): Promise<void> {
    this.#settle(await this.#deps.client.barrier({ event: { case: "executeToolRound", value: { roundId, calls } } }, this.#deps.signal), "execute_tool_round");
  }

  #settle(outcome: BarrierOutcome, what: string): void {
    switch (outcome.kind) {
      case "acked":
        return;
      case "rejected":
        this.#log.warn({ error: outcome.error }, `client rejected ${what}`);
        throw new RunStop(failed(FailureKind.CLIENT, `client could not apply ${what}: ${outcome.error}`));
      case "client_gone":
        this.#log.warn({ reason: outcome.reason }, `client did not acknowledge ${what}`);
        throw new RunStop({ kind: "cancelled", reason: `client gone: ${outcome.reason}` });
      case "aborted":
        throw new RunInterrupted(`cancelled while waiting for the client to acknowledge ${what}`);
      default:
        assertNever(outcome);
    }
  }

  #usageSnapshot(): Pick<StateCommitted, "turnUsage" | "contextTokens"> {
    const tokens = contextTokens(this.#lastUsage);
    return { turnUsage: this.turnUsage, contextTokens: tokens };
  }

  /** The history this engine last held, whole (for the next run of the conversation on this worker). */
  get knownHistory(): KnownHistory | undefined {
    return this.#known;
  }

  /** Only what follows the revision held now travels (the store sends the rest when it is not in the chain). */
  async #loadHistory(revisionId: string): Promise<void> {
    this.#useHistory(revisionId, await this.#deps.store.revisionHistory(revisionId, this.#known));
  }

  #useHistory(revisionId: string, loaded: RevisionHistory): void {
    this.#head = revisionId;
    if (revisionId !== "") this.#known = { revisionId, history: loaded };
    this.#history = loaded.messages;
    this.#messageIds = loaded.messageIds;
    const anchor = loaded.anchor;
    this.#anchor =
      anchor !== undefined && anchor.messageCount <= loaded.messages.length ? { messageCount: anchor.messageCount, inputTokens: Number(anchor.inputTokens) } : undefined;
    const compaction = loaded.compaction;
    this.#compactedHead =
      compaction !== undefined && compaction.revisionId === revisionId
        ? { sourceRevisionId: compaction.sourceRevisionId, summarizedCount: compaction.summarizedCount }
        : undefined;
  }
}
