/**
 * Page conversion (HTML -> Markdown) runs in the adapter's CPU pool
 * (cpu/cpu-pool.ts): converting a large page takes tens of milliseconds of
 * CPU, which must not stall the other runs the adapter serves. A conversion
 * aborted with its fetch stops waiting.
 */
import type { ConvertedPage } from "./html-markdown.ts";
import type { ConvertTask } from "./markdown-worker.ts";

export interface PageConverter {
  convert(task: ConvertTask, signal: AbortSignal): Promise<ConvertedPage>;
  close(): Promise<void>;
}
