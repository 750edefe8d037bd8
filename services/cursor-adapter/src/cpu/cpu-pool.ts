/**
 * The adapter's one piscina worker pool for CPU-heavy steps (issue 15: heavy
 * work off the event loop): converting fetched pages to Markdown and reading
 * long client histories. One pool per process; an idle thread exits.
 */
import { Piscina } from "piscina";
import type { ConvertedPage } from "../web/html-markdown.ts";
import type { PageConverter } from "../web/page-conversion.ts";
import { inlineHistoryReader, pooledHistoryReader, type HistoryReader, type ReadHistoryResult } from "../request/history-reader.ts";
import type { CpuTask } from "./cpu-worker.ts";

export interface CpuPoolOptions {
  /** Worker threads at most (default 2). */
  readonly maxThreads?: number;
  /** An idle worker exits after this long (default 60 s). */
  readonly idleTimeoutMs?: number;
  /** false: histories are read on the event loop (HISTORY_IN_POOL=0; the event-loop bench compares both). */
  readonly histories?: boolean;
}

export interface CpuPool {
  readonly converter: PageConverter;
  readonly histories: HistoryReader;
  close(): Promise<void>;
}

export function createCpuPool(options: CpuPoolOptions = {}): CpuPool {
  const pool = new Piscina<CpuTask, ConvertedPage | ReadHistoryResult>({
    filename: new URL("./cpu-worker.ts", import.meta.url).href,
    minThreads: 0,
    maxThreads: options.maxThreads ?? 2,
    idleTimeout: options.idleTimeoutMs ?? 60_000,
  });
  return {
    converter: {
      convert: (task, signal) => pool.run({ kind: "convert_page", task }, { signal }) as Promise<ConvertedPage>,
      close: () => pool.destroy(),
    },
    histories: options.histories === false ? inlineHistoryReader : pooledHistoryReader((task) => pool.run({ kind: "read_history", task }) as Promise<ReadHistoryResult>),
    close: () => pool.destroy(),
  };
}
