/**
 * Page conversion (HTML -> Markdown) in a piscina worker pool: converting a
 * large page takes tens of milliseconds of CPU, which must not stall the other
 * runs the adapter serves. A conversion aborted with its fetch stops waiting.
 */
import { Piscina } from "piscina";
import type { ConvertedPage } from "./html-markdown.ts";
import type { ConvertTask } from "./markdown-worker.ts";

export interface PageConverter {
  convert(task: ConvertTask, signal: AbortSignal): Promise<ConvertedPage>;
  close(): Promise<void>;
}

export interface MarkdownPoolOptions {
  /** Worker threads at most (default 2). */
  maxThreads?: number;
  /** An idle worker exits after this long (default 60 s). */
  idleTimeoutMs?: number;
}

export function createMarkdownPool(options: MarkdownPoolOptions = {}): PageConverter {
  const pool = new Piscina<ConvertTask, ConvertedPage>({
    filename: new URL("./markdown-worker.ts", import.meta.url).href,
    minThreads: 0,
    maxThreads: options.maxThreads ?? 2,
    idleTimeout: options.idleTimeoutMs ?? 60_000,
  });
  return {
    convert: (task, signal) => pool.run(task, { signal }),
    close: () => pool.destroy(),
  };
}
