/**
 * Page conversion (HTML -> Markdown): the task, the converter the web tools
 * call, and the step itself. The step runs in the adapter's CPU pool
 * (cpu/cpu-pool.ts, cpu/cpu-worker.ts): converting a large page takes tens of
 * milliseconds of CPU, which must not stall the other runs the adapter
 * serves. A conversion aborted with its fetch stops waiting.
 */
import { htmlToMarkdown, textToMarkdown, type ConvertedPage } from "./html-markdown.ts";

export interface ConvertTask {
  /** "html": HTML -> Markdown; "text": plain text / JSON / Markdown as is. */
  kind: "html" | "text";
  text: string;
  url: string;
  mediaType: string;
}

export interface PageConverter {
  convert(task: ConvertTask, signal: AbortSignal): Promise<ConvertedPage>;
  close(): Promise<void>;
}

/** One conversion, as the CPU pool's worker runs it. */
export function convertPage(task: ConvertTask): ConvertedPage {
  return task.kind === "html" ? htmlToMarkdown(task.text, task.url) : textToMarkdown(task.text, task.mediaType);
}
