/**
 * write_file and edit_file -> fs/write_text_file, behind a permission request
 * that shows the change as a diff (old text from fs/read_text_file; none for a
 * new file). edit_file computes the new text here: old_string must occur
 * exactly once unless replace_all; otherwise the model is told and nothing is
 * asked or written.
 */
import { z } from "zod";
import type { ToolCallContent } from "../acp/acp-types.ts";
import { askPermission, editPermissionKey, refusal } from "./permissions.ts";
import { absolutePath, errorMessage, failed, type ToolContext, type ToolOutcome } from "./tool-context.ts";

export const writeFileArgs = z.object({ path: z.string().min(1), content: z.string() });
export const editFileArgs = z.object({ path: z.string().min(1), old_string: z.string().min(1), new_string: z.string(), replace_all: z.boolean().optional() });

export type WriteFileArgs = z.infer<typeof writeFileArgs>;
export type EditFileArgs = z.infer<typeof editFileArgs>;

export async function writeFile(args: WriteFileArgs, ctx: ToolContext, canRead: boolean): Promise<ToolOutcome> {
  const path = absolutePath(ctx.cwd, args.path);
  // The old text only makes the diff; a file that cannot be read is a new file.
  const oldText = canRead ? await ctx.editor.readTextFile(ctx.sessionId, path, {}, ctx.signal).catch(() => null) : null;
  return applyChange(ctx, path, oldText, args.content, oldText === null ? `Create ${path}` : `Write ${path}`);
}

export async function editFile(args: EditFileArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const path = absolutePath(ctx.cwd, args.path);
  let oldText: string;
  try {
    oldText = await ctx.editor.readTextFile(ctx.sessionId, path, {}, ctx.signal);
  } catch (error) {
    return failed(`Cannot read ${path} to edit it: ${errorMessage(error)}`, { locations: [{ path }] });
  }
  const count = occurrences(oldText, args.old_string);
  if (count === 0) return failed(`old_string does not occur in ${path}; read the file and match its text exactly.`, { locations: [{ path }] });
  if (count > 1 && args.replace_all !== true) {
    return failed(`old_string occurs ${count} times in ${path}; add surrounding lines to make it unique, or set replace_all.`, { locations: [{ path }] });
  }
  const newText = args.replace_all === true ? oldText.split(args.old_string).join(args.new_string) : oldText.replace(args.old_string, () => args.new_string);
  return applyChange(ctx, path, oldText, newText, `Edit ${path}`);
}

async function applyChange(ctx: ToolContext, path: string, oldText: string | null, newText: string, title: string): Promise<ToolOutcome> {
  const diff: ToolCallContent = { type: "diff", path, oldText, newText };
  const view = { title, content: [diff], locations: [{ path }] };
  ctx.show({ ...view, status: "pending" });
  const verdict = await askPermission(ctx.permissions, editPermissionKey(), "edits in this session", {
    toolCallId: ctx.callId,
    title,
    kind: "edit",
    status: "pending",
    content: [diff],
    locations: [{ path }],
  });
  const refused = refusal(verdict, {
    rejected: `The user rejected this change to ${path}; it was not written. Do not make the same change again; ask or take another approach.`,
    cancelled: `The change to ${path} was not written: the user cancelled.`,
  });
  if (refused !== undefined) return failed(refused, view);
  ctx.show({ status: "in_progress" });
  try {
    await ctx.editor.writeTextFile(ctx.sessionId, path, newText, ctx.signal);
  } catch (error) {
    return failed(`Cannot write ${path}: ${errorMessage(error)}`, view);
  }
  return { content: oldText === null ? `Created ${path}.` : `Wrote ${path}.`, isError: false, view: { ...view, status: "completed" } };
}

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}
