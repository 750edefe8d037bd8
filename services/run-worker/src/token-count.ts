/**
 * Token counting for context estimates. Where the model family publishes its
 * tokenizer (OpenAI's o200k_base / cl100k_base BPE, through js-tiktoken, the
 * JavaScript port maintained with tiktoken), texts are encoded for real, in a
 * thread of their own (bpe-thread.ts: loading an encoding and encoding long
 * histories must not stall the runs on this event loop): the caller names the
 * texts it will count, gets them counted in one batch, and any other text is
 * estimated from that batch's bytes per token. For every other family (Claude
 * and most OpenAI-compatible servers publish no current tokenizer) tokens are
 * UTF-8 bytes divided by a bytes-per-token ratio calibrated from the
 * provider's own counts of this worker's earlier requests of the same model.
 */
import { Worker } from "node:worker_threads";

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

export function byteRatioCounter(bytesPerToken: number): TokenCounter {
  return { name: "bytes", count: (text) => Math.ceil(Buffer.byteLength(text, "utf8") / bytesPerToken) };
}

type Pending = { resolve(counts: number[]): void; reject(error: Error): void };

/**
 * The counters of one worker: BPE where the ModelSpec names an encoding, else
 * the calibrated ratio of that model (the default ratio until calibrated).
 */
export class TokenCounters {
  readonly #ratios = new Map<string, number>();
  #thread: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  /**
   * A counter for `texts` (counted now, in the BPE thread, for BPE models).
   * Never fails: without the thread the ratio counter stands in.
   */
  async counterFor(modelId: string, tokenizer: string, texts: readonly string[] = []): Promise<TokenCounter> {
    if (tokenizer !== "o200k_base" && tokenizer !== "cl100k_base") return byteRatioCounter(this.bytesPerToken(modelId));
    const unique = [...new Set(texts)];
    let counts: number[];
    try {
      counts = await this.#count(tokenizer, unique);
    } catch {
      return byteRatioCounter(this.bytesPerToken(modelId));
    }
    const known = new Map(unique.map((text, i) => [text, counts[i] ?? 0]));
    let bytes = 0;
    let tokens = 0;
    for (const [text, n] of known) {
      bytes += Buffer.byteLength(text, "utf8");
      tokens += n;
    }
    const fallback = byteRatioCounter(tokens > 0 ? Math.min(MAX_BYTES_PER_TOKEN, Math.max(MIN_BYTES_PER_TOKEN, bytes / tokens)) : DEFAULT_BYTES_PER_TOKEN);
    return { name: tokenizer, count: (text) => known.get(text) ?? fallback.count(text) };
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

  /** Ends the BPE thread (if one started). */
  async close(): Promise<void> {
    const thread = this.#thread;
    this.#thread = undefined;
    if (thread !== undefined) await thread.terminate();
  }

  #count(encoding: "o200k_base" | "cl100k_base", texts: readonly string[]): Promise<number[]> {
    if (texts.length === 0) return Promise.resolve([]);
    const thread = this.#start();
    const id = this.#nextId++;
    return new Promise<number[]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      thread.postMessage({ id, encoding, texts });
    });
  }

  #start(): Worker {
    if (this.#thread !== undefined) return this.#thread;
    const thread = new Worker(new URL("./bpe-thread.ts", import.meta.url));
    // The thread never keeps the process alive on its own.
    thread.unref();
    thread.on("message", (reply: { id: number; counts?: number[]; error?: string }) => {
      const pending = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      if (reply.counts !== undefined) pending?.resolve(reply.counts);
      else pending?.reject(new Error(reply.error ?? "token count failed"));
    });
    const failAll = (error: Error): void => {
      if (this.#thread === thread) this.#thread = undefined;
      for (const pending of this.#pending.values()) pending.reject(error);
      this.#pending.clear();
    };
    thread.on("error", failAll);
    thread.on("exit", (code) => failAll(new Error(`the token count thread exited (${code})`)));
    this.#thread = thread;
    return thread;
  }
}
