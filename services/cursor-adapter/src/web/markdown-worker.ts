/**
 * One page conversion (run by cpu/cpu-worker.ts in the CPU pool), off the
 * adapter's event loop.
 */
import { htmlToMarkdown, textToMarkdown, type ConvertedPage } from "./html-markdown.ts";

export interface ConvertTask {
  /** "html": HTML -> Markdown; "text": plain text / JSON / Markdown as is. */
  kind: "html" | "text";
  text: string;
  url: string;
  mediaType: string;
}

export default function convert(task: ConvertTask): ConvertedPage {
  return task.kind === "html" ? htmlToMarkdown(task.text, task.url) : textToMarkdown(task.text, task.mediaType);
}
