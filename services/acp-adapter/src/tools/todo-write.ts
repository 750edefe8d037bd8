/**
 * todo_write -> the session's plan (a `plan` session update): the whole list
 * every time, as ACP plan entries. Runs on the gateway; the editor needs no
 * capability for it.
 */
import { z } from "zod";
import type { ToolContext, ToolOutcome } from "./tool-context.ts";

export const todoWriteArgs = z.object({
  todos: z.array(
    z.object({
      content: z.string().min(1),
      status: z.enum(["pending", "in_progress", "completed"]),
      priority: z.enum(["high", "medium", "low"]).optional(),
    }),
  ),
});

export type TodoWriteArgs = z.infer<typeof todoWriteArgs>;

export function todoWrite(args: TodoWriteArgs, ctx: ToolContext): ToolOutcome {
  ctx.plan(args.todos.map((t) => ({ content: t.content, status: t.status, priority: t.priority ?? "medium" })));
  const done = args.todos.filter((t) => t.status === "completed").length;
  return { content: `Plan updated: ${args.todos.length} steps, ${done} completed.`, isError: false, view: { status: "completed", title: "Update plan" } };
}
