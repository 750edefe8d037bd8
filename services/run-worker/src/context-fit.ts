/**
 * Whether a run's next model call fits the context budget
 * (context-estimate.ts), and what the provider's counts teach the ratio
 * counter. Fixed per run: the model, its prompt and the compaction settings.
 */
import type { Message } from "@byok/contracts";
import type { CompactionConfig } from "./compaction.ts";
import { contextBudget, estimateInputTokens, messageText, promptTexts, requestBytes, type ContextAnchor, type ContextBudget } from "./context-estimate.ts";
import type { RunModelContext } from "./model-request.ts";
import { byteRatioCounter, type TokenCounter, type TokenCounters } from "./token-count.ts";

/** An upper bound of BPE counts (every token is at least one byte). */
const ONE_TOKEN_PER_BYTE = byteRatioCounter(1);

export class ContextFit {
  readonly #counters: TokenCounters;
  readonly #run: RunModelContext;
  readonly #compaction: CompactionConfig | undefined;
  /** undefined = compaction off or no context window known: nothing is ever compacted. */
  readonly budget: ContextBudget | undefined;

  constructor(counters: TokenCounters, run: RunModelContext, compaction: CompactionConfig | undefined) {
    this.#counters = counters;
    this.#run = run;
    this.#compaction = compaction;
    this.budget = compaction === undefined ? undefined : contextBudget(run.model?.contextWindow, compaction.reservePercent);
  }

  /** A counter for this history (its texts counted in one batch for BPE models). */
  async counter(history: readonly Message[]): Promise<TokenCounter> {
    const texts = [...promptTexts(this.#run.prompt), ...history.map(messageText)];
    const prompt = this.#compaction?.prompt;
    if (prompt !== undefined) texts.push(prompt.system, prompt.request);
    return this.#counters.counterFor(this.#run.model?.modelId ?? "", this.#run.model?.tokenizer ?? "", texts);
  }

  /**
   * The next call's estimate, its counter and the budget when it is over the budget, else
   * undefined. A BPE token is at least one byte, so when even one token per
   * byte fits, the history fits and the tokenizer is not needed (nor loaded).
   */
  async overBudget(history: readonly Message[], anchor: ContextAnchor | undefined): Promise<{ counter: TokenCounter; estimate: number; budget: ContextBudget } | undefined> {
    const budget = this.budget;
    if (budget === undefined) return undefined;
    if (estimateInputTokens(ONE_TOKEN_PER_BYTE, this.#run.prompt, history, anchor) <= budget.budget) return undefined;
    const counter = await this.counter(history);
    const estimate = estimateInputTokens(counter, this.#run.prompt, history, anchor);
    return estimate <= budget.budget ? undefined : { counter, estimate, budget };
  }

  /** The provider counted `inputTokens` for `history`: calibrates the ratio counter (models without a BPE encoding). */
  calibrate(history: readonly Message[], inputTokens: number): void {
    const tokenizer = this.#run.model?.tokenizer ?? "";
    if (tokenizer !== "o200k_base" && tokenizer !== "cl100k_base") this.#counters.calibrate(this.#run.model?.modelId ?? "", requestBytes(this.#run.prompt, history), inputTokens);
  }
}
