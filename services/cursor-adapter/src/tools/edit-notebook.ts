/**
 * EditNotebook: a Jupyter cell edit through the same two execs as StrReplace
 * (read the .ipynb, write the complete new file; notebook-cells.ts does the
 * edit), on the edit card.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard } from "./cards.ts";
import { normalizeNewlines } from "./edit-engine.ts";
import { EditExec, editInvalid, editResult, editVariant, type EditDecision, type FileBefore } from "./edit-tools.ts";
import { editNotebookCell } from "./notebook-cells.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { ToolCallInput, ToolPlan, ToolPlanContext } from "./types.ts";

export function planEditNotebook(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("EditNotebook", args);
  const path = reader.requiredString("target_notebook");
  const cellIndex = reader.optionalInteger("cell_idx", { min: 0 });
  if (args["cell_idx"] === undefined || args["cell_idx"] === null) reader.problem(`"cell_idx" is required`);
  const isNewCell = reader.optionalBoolean("is_new_cell");
  if (isNewCell === undefined && reader.error() === undefined) reader.problem(`"is_new_cell" is required`);
  const language = reader.optionalString("cell_language") ?? "python";
  const oldString = reader.requiredText("old_string");
  const newString = reader.requiredText("new_string");
  if (path !== "" && !path.toLowerCase().endsWith(".ipynb")) reader.problem(`"target_notebook" must be a .ipynb file; use StrReplace or Write for other files`);
  const editArgs = create(tools.EditArgsSchema, { path, streamContent: normalizeNewlines(newString) });
  const error = reader.error();
  if (error !== undefined || cellIndex === undefined || isNewCell === undefined) return editInvalid(call, ctx, editArgs, error ?? "Invalid arguments for EditNotebook.");
  const decide = (before: FileBefore): EditDecision => {
    const edited = editNotebookCell(before.exists ? before.content : undefined, { path, cellIndex, isNewCell, language, oldString, newString });
    if (edited.kind === "error") {
      return {
        kind: "fail",
        message: edited.message,
        result: edited.fileNotFound
          ? editResult({ case: "fileNotFound", value: { path } })
          : editResult({ case: "error", value: { path, error: edited.message, modelVisibleError: edited.message } }),
      };
    }
    return { kind: "write", after: edited.after, summary: edited.summary };
  };
  return {
    kind: "exec",
    started: startedCard(call.callId, editVariant(editArgs), ctx),
    exec: new EditExec("EditNotebook", call.callId, editArgs, decide, ctx),
  };
}
