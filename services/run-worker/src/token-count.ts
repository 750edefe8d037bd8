/**
 * Token counting for context estimates. Where the model family publishes its
 * tokenizer (OpenAI's o200k_base / cl100k_base BPE, through js-tiktoken, the
 * JavaScript port maintained with tiktoken), text is encoded for real; for
 * every other family (Claude and most OpenAI-compatible servers publish no
 * current tokenizer) tokens are UTF-8 bytes divided by a bytes-per-token ratio
 * calibrated from the provider's own counts of this worker's earlier requests
 * of the same model. The BPE ranks load once, on first use.
 */
import { Tiktoken } from "js-tiktoken/lite";

export type TokenizerName = "o200k_base" | "cl100k_base" | "bytes";

export interface TokenCounter {
  readonly name: TokenizerName;
  count(text: string): number;
}

/** Bytes per token before any calibration: a little low for English prose, so estimates err high. */
export const DEFAULT_BYTES_PER_TOKEN = 3.5;
const MIN_BYTES_PER_TOKEN = 1.5;
const MAX_BYTES_PER_TOKEN = 8;
/** Weight of a new observation in the running ratio. */
const CALIBRATION_WEIGHT = 0.3;

const encoders = new Map<"o200k_base" | "cl100k_base", Promise<Tiktoken>>();

async function loadEncoder(name: "o200k_base" | "cl100k_base"): Promise<Tiktoken> {
  let loading = encoders.get(name);
  if (loading === undefined) {
    loading = (name === "o200k_base" ? import("js-tiktoken/ranks/o200k_base") : import("js-tiktoken/ranks/cl100k_base")).then((ranks) => new Tiktoken(ranks.default));
    encoders.set(name, loading);
  }
  return loading;
}

function bpeCounter(name: "o200k_base" | "cl100k_base", encoder: Tiktoken): TokenCounter {
  return { name, count: (text) => (text === "" ? 0 : encoder.encode(text, [], []).length) };
}

export function byteRatioCounter(bytesPerToken: number): TokenCounter {
  return { name: "bytes", count: (text) => Math.ceil(Buffer.byteLength(text, "utf8") / bytesPerToken) };
}

/**
 * The counters of one worker: BPE where the ModelSpec names an encoding, else
 * the calibrated ratio of that model (the default ratio until calibrated).
 */
export class TokenCounters {
  readonly #ratios = new Map<string, number>();

  async counterFor(modelId: string, tokenizer: string): Promise<TokenCounter> {
    if (tokenizer === "o200k_base" || tokenizer === "cl100k_base") return bpeCounter(tokenizer, await loadEncoder(tokenizer));
    return byteRatioCounter(this.#ratios.get(modelId) ?? DEFAULT_BYTES_PER_TOKEN);
  }

  /** One provider count of a whole request whose text had `bytes` UTF-8 bytes. */
  calibrate(modelId: string, bytes: number, reportedTokens: number): void {
    if (bytes <= 0 || reportedTokens <= 0) return;
    const observed = Math.min(MAX_BYTES_PER_TOKEN, Math.max(MIN_BYTES_PER_TOKEN, bytes / reportedTokens));
    const previous = this.#ratios.get(modelId);
    this.#ratios.set(modelId, previous === undefined ? observed : previous + CALIBRATION_WEIGHT * (observed - previous));
  }

  /** The ratio used for `modelId` now. */
  bytesPerToken(modelId: string): number {
    return this.#ratios.get(modelId) ?? DEFAULT_BYTES_PER_TOKEN;
  }
}
