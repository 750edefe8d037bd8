/**
 * read_file -> fs/read_text_file: the editor's view of the file (unsaved
 * changes included). The model sees the text (cut at READ_LIMIT_CHARS); the
 * editor shows the call with the file as its location.
 */
import { z } from "zod";
import { absolutePath, capped, errorMessage, failed, type ToolContext, type ToolOutcome } from "./tool-context.ts";

export const readFileArgs = z.object({
  path: z.string().min(1),
  line: z.number().int().min(1).optional(),
  limit: z.number().int().min(1).optional(),
});

export type ReadFileArgs = z.infer<typeof readFileArgs>;

export async function readFile(args: ReadFileArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const path = absolutePath(ctx.cwd, args.path);
  ctx.show({ status: "in_progress", locations: [{ path, ...(args.line === undefined ? {} : { line: args.line }) }] });
  let text: string;
  try {
    text = await ctx.editor.readTextFile(ctx.sessionId, path, { line: args.line, limit: args.limit }, ctx.signal);
  } catch (error) {
    return failed(`Cannot read ${path}: ${errorMessage(error)}`);
  }
  return { content: text === "" ? "(the file is empty)" : capped(text, ctx.limits.readLimitChars, "file"), isError: false, view: { status: "completed" } };
}
