/**
 * One compaction of a run's history, before a model call (design: docs/
 * long-sessions.md): plan what is kept (compaction-plan.ts), tell the client
 * it started (compaction_started), make the summary call (our prompt, no
 * tools, no thinking, at most `summaryMaxTokens` out; its stream is not
 * forwarded), commit the new history as a new revision (revision.compact: a
 * branch that records the head it replaced) and pass the COMPACTED barrier so
 * the client checkpoints it before the next model call.
 */
import { create } from "@bufbuild/protobuf";
import {
  clientModelCallIndexOf,
  CommitCause,
  CompactionReason,
  CompactionStartedSchema,
  ModelFailureKind,
  ModelRequestSchema,
  providerCallId,
  type Message,
  type ProviderCallIndex,
  type StateCommitted,
  type Usage,
} from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";
import type { ClientChannel } from "./client-channel.ts";
import { planCompaction, summaryMessage, summaryTextOf, type CompactionSettings } from "./compaction-plan.ts";
import { messagesTokens, promptTokens, type ContextBudget } from "./context-estimate.ts";
import type { CycleFailure } from "./model-cycle.ts";
import type { ModelInvoker } from "./model-invocation.ts";
import type { RunModelContext } from "./model-request.ts";
import type { StateCommittedInit } from "./tool-round.ts";
import type { TokenCounter } from "./token-count.ts";

/** The compaction prompt of ours (prompt/compaction): the summary call's system text and its closing request. */
export interface CompactionPrompt {
  readonly system: string;
  readonly request: string;
}

export interface CompactionConfig extends CompactionSettings {
  /** Share of the context window kept free (budget = window - reserve). */
  readonly reservePercent: number;
  readonly prompt: CompactionPrompt;
}

export interface CompactionInput {
  readonly run: RunModelContext;
  readonly reason: CompactionReason;
  readonly index: ProviderCallIndex;
  readonly head: string;
  readonly history: readonly Message[];
  readonly messageIds: readonly string[];
  readonly budget: ContextBudget;
  readonly counter: TokenCounter;
}

export type CompactionOutcome =
  | { readonly kind: "compacted"; readonly revisionId: string; readonly usage: Usage | undefined; readonly estimate: number }
  | { readonly kind: "nothing_to_summarize" }
  | { readonly kind: "failed"; readonly failure: CycleFailure }
  | { readonly kind: "cancelled" };

export interface CompactionDeps {
  readonly store: StoreClient;
  readonly invoker: ModelInvoker;
  readonly client: ClientChannel;
  readonly signal: AbortSignal;
  readonly config: CompactionConfig;
  readonly log: Logger;
  /** The COMPACTED barrier (throws when the run must stop). */
  commit(state: StateCommittedInit): Promise<void>;
  usageSnapshot(): Pick<StateCommitted, "turnUsage">;
}

export async function compact(deps: CompactionDeps, input: CompactionInput): Promise<CompactionOutcome> {
  const { config, log } = deps;
  const counter = input.counter;
  const summaryPrompt = { mode: "compaction", systemText: config.prompt.system, tools: [] };
  const plan = planCompaction({
    history: input.history,
    budget: input.budget.budget,
    promptTokens: promptTokens(counter, input.run.prompt),
    summaryPromptTokens: counter.count(config.prompt.system) + counter.count(config.prompt.request),
    requestText: config.prompt.request,
    counter,
    settings: config,
  });
  if (plan.kind === "nothing_to_summarize") return plan;

  const spec = input.run.model;
  const maxOut = Math.min(config.summaryMaxTokens, spec?.maxOutputTokens ?? config.summaryMaxTokens);
  const request = create(ModelRequestSchema, {
    callId: providerCallId(input.run.runId, input.index),
    runId: input.run.runId,
    conversationId: input.run.conversationId,
    memberId: input.run.memberId,
    spec: { modelId: spec?.modelId ?? "", maxOutputTokens: maxOut, disableThinking: true, tokenizer: spec?.tokenizer ?? "", ...(spec?.contextWindow === undefined ? {} : { contextWindow: spec.contextWindow }) },
    prompt: summaryPrompt,
    messages: plan.summaryMessages,
    clientKind: input.run.clientKind,
  });
  log.info({ call_id: request.callId, reason: CompactionReason[input.reason], summarized: plan.summarizedCount, kept: plan.kept.length }, "compacting the history");
  deps.client.emit(clientModelCallIndexOf(input.index), { case: "compactionStarted", value: create(CompactionStartedSchema, { reason: input.reason }) });
  // The summary is not the answer: nothing of its stream goes to the client.
  const outcome = await deps.invoker.invoke(request, () => undefined, deps.signal);
  switch (outcome.kind) {
    case "cancelled":
      return { kind: "cancelled" };
    case "failed":
      return { kind: "failed", failure: outcome.failure };
    case "completed":
      break;
  }
  const summary = outcome.assistant.content.flatMap((p) => (p.part.case === "text" ? [p.part.value.text] : [])).join("").trim();
  if (summary === "") {
    return {
      kind: "failed",
      failure: { origin: "provider", kind: ModelFailureKind.PROVIDER_ERROR, message: "the summary call returned no text", retryable: false, partialText: "", partialReasoning: "", usage: outcome.usage, providerCode: "", retryAfterMs: 0 },
    };
  }
  const compacted = await deps.store.compactHistory({
    runId: input.run.runId,
    expectedHeadRevisionId: input.head,
    summary: summaryMessage(summary, input.head),
    keptMessageIds: plan.kept.map((i) => input.messageIds[i] as string),
    summarizedCount: plan.summarizedCount,
    providerCallIndex: input.index,
  });
  const estimate = promptTokens(counter, input.run.prompt) + messagesTokens(counter, compacted.messages);
  await deps.commit({
    cause: CommitCause.COMPACTED,
    revisionId: compacted.revisionId,
    compaction: { sourceRevisionId: input.head, summary, history: compacted.messages, summarizedCount: plan.summarizedCount, reason: input.reason },
    contextTokens: BigInt(estimate),
    ...deps.usageSnapshot(),
  });
  log.info({ revision_id: compacted.revisionId, estimate, budget: input.budget.budget }, "history compacted");
  return { kind: "compacted", revisionId: compacted.revisionId, usage: outcome.usage, estimate };
}

/** The COMPACTED commit again, for a new owner that finds the run's head is a compaction the client may not have seen. */
export function repeatedCompactionCommit(revisionId: string, sourceRevisionId: string, summarizedCount: number, history: readonly Message[]): StateCommittedInit {
  return {
    cause: CommitCause.COMPACTED,
    revisionId,
    compaction: { sourceRevisionId, summary: summaryTextOf(history[0]), history: [...history], summarizedCount, reason: CompactionReason.UNSPECIFIED },
  };
}
