/**
 * The piscina worker of cpu-pool.ts: one CPU-heavy step per task, off the
 * adapter's event loop (page conversion, reading long client histories).
 */
import type { ConvertedPage } from "../web/html-markdown.ts";
import { convertPage, type ConvertTask } from "../web/page-conversion.ts";
import { readHistoryTask, type ReadHistoryResult, type ReadHistoryTask } from "../request/history-reader.ts";

export type CpuTask = { readonly kind: "convert_page"; readonly task: ConvertTask } | { readonly kind: "read_history"; readonly task: ReadHistoryTask };

export type CpuResult<T extends CpuTask> = T extends { kind: "convert_page" } ? ConvertedPage : ReadHistoryResult;

export default function run(task: CpuTask): ConvertedPage | ReadHistoryResult {
  switch (task.kind) {
    case "convert_page":
      return convertPage(task.task);
    case "read_history":
      return readHistoryTask(task.task);
    default: {
      const unknown: never = task;
      throw new Error(`unknown CPU task ${JSON.stringify(unknown)}`);
    }
  }
}
