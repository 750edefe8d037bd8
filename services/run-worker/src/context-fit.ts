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
/**
 * Bytes per token of text denser than any a history really holds for o200k_base and
 * cl100k_base (English prose and code encode at 3.5-4.5, CJK text at 2.5-3.5, digits in
 * 3-digit tokens): an estimate at this ratio errs high. When even that fits, the exact
 * count (a BPE pass over every message, 100 ms and more for a long history without an
 * anchor) cannot change the decision and is skipped; a history that does not fit at it
 * is counted exactly. A pathological text denser than this that overflows the window
 * anyway is caught by the provider's context overflow, which compacts and retries once.
 */
const DENSE_BYTES_PER_TOKEN = 2;
const DENSE_TEXT = byteRatioCounter(DENSE_BYTES_PER_TOKEN);

function isBpe(tokenizer: string): boolean {
  return tokenizer === "o200k_base" || tokenizer === "cl100k_base";
}

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
   * byte fits, the history fits and the tokenizer is not needed (nor loaded);
   * nor is it when the history fits at DENSE_BYTES_PER_TOKEN.
   */
  async overBudget(history: readonly Message[], anchor: ContextAnchor | undefined): Promise<{ counter: TokenCounter; estimate: number; budget: ContextBudget } | undefined> {
    const budget = this.budget;
    if (budget === undefined) return undefined;
    if (estimateInputTokens(ONE_TOKEN_PER_BYTE, this.#run.prompt, history, anchor) <= budget.budget) return undefined;
    if (isBpe(this.#run.model?.tokenizer ?? "") && estimateInputTokens(DENSE_TEXT, this.#run.prompt, history, anchor) <= budget.budget) return undefined;
    const counter = await this.counter(history);
    const estimate = estimateInputTokens(counter, this.#run.prompt, history, anchor);
    return estimate <= budget.budget ? undefined : { counter, estimate, budget };
  }

  /** The provider counted `inputTokens` for `history`: calibrates the ratio counter (models without a BPE encoding). */
  calibrate(history: readonly Message[], inputTokens: number): void {
    const tokenizer = this.#run.model?.tokenizer ?? "";
    if (!isBpe(tokenizer)) this.#counters.calibrate(this.#run.model?.modelId ?? "", requestBytes(this.#run.prompt, history), inputTokens);
  }
}
