/**
 * The pure part of EditNotebook: one cell of a Jupyter notebook (nbformat 4
 * JSON) edited by exact string replacement, or a new cell inserted. The whole
 * notebook comes back as text for the write (same indentation as the file;
 * cell sources as line arrays, the way Jupyter writes them). An edited code
 * cell loses its outputs and execution count: they belonged to the old code.
 */
import { randomBytes } from "node:crypto";
import { applyStrReplace, normalizeNewlines } from "./edit-engine.ts";
import { isJsonObject } from "./tool-args.ts";

export interface NotebookCellEdit {
  path: string;
  cellIndex: number;
  isNewCell: boolean;
  /** "markdown", "raw", or a kernel language (a code cell). */
  language: string;
  oldString: string;
  newString: string;
}

export type NotebookEditResult = { kind: "ok"; after: string; summary: string } | { kind: "error"; message: string; fileNotFound: boolean };

type Json = Record<string, unknown>;

/** `before` is the file's text, or undefined when it does not exist. */
export function editNotebookCell(before: string | undefined, edit: NotebookCellEdit): NotebookEditResult {
  const fail = (message: string, fileNotFound = false): NotebookEditResult => ({ kind: "error", message, fileNotFound });
  if (before === undefined) {
    if (!edit.isNewCell || edit.cellIndex !== 0) return fail(`Notebook not found: ${edit.path}. To create it, insert a new cell at cell_idx 0.`, true);
    const notebook: Json = {
      cells: [newCell(edit, 5)],
      metadata: { language_info: { name: cellKind(edit.language) === "code" ? edit.language : "python" } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    return { kind: "ok", after: serialize(notebook, 1), summary: `Created notebook ${edit.path} with 1 cell` };
  }
  let notebook: unknown;
  try {
    notebook = JSON.parse(before);
  } catch (cause) {
    return fail(`${edit.path} is not a notebook: not valid JSON (${(cause as Error).message}).`);
  }
  if (!isJsonObject(notebook) || !Array.isArray(notebook["cells"])) return fail(`${edit.path} is not a Jupyter notebook (no "cells" list).`);
  const cells = notebook["cells"] as unknown[];
  const minor = typeof notebook["nbformat_minor"] === "number" ? notebook["nbformat_minor"] : 0;
  if (edit.isNewCell) {
    if (edit.oldString !== "") return fail("old_string must be empty when is_new_cell is true.");
    if (edit.cellIndex > cells.length) return fail(`cell_idx ${edit.cellIndex} is past the end: ${edit.path} has ${cells.length} cells (use ${cells.length} to append).`);
    cells.splice(edit.cellIndex, 0, newCell(edit, minor));
    return { kind: "ok", after: serialize(notebook, indentOf(before)), summary: `Inserted a ${cellKind(edit.language)} cell at index ${edit.cellIndex} of ${edit.path}` };
  }
  const cell = cells[edit.cellIndex];
  if (edit.cellIndex >= cells.length || !isJsonObject(cell)) {
    return fail(`cell_idx ${edit.cellIndex} does not exist: ${edit.path} has ${cells.length} cells (0 to ${cells.length - 1}).`);
  }
  const source = normalizeNewlines(sourceText(cell["source"]));
  let after: string;
  if (edit.oldString === "") {
    if (source !== "") return fail(`old_string is empty but cell ${edit.cellIndex} is not; give the exact text of the cell to replace.`);
    after = normalizeNewlines(edit.newString);
  } else {
    const replaced = applyStrReplace({ path: `${edit.path} cell ${edit.cellIndex}`, before: source, fileExists: true, oldString: edit.oldString, newString: edit.newString, replaceAll: false });
    if (replaced.kind === "error") return fail(replaced.message);
    after = replaced.after;
  }
  cell["source"] = sourceLines(after);
  if (cell["cell_type"] === "code") {
    cell["outputs"] = [];
    cell["execution_count"] = null;
  }
  return { kind: "ok", after: serialize(notebook, indentOf(before)), summary: `Edited cell ${edit.cellIndex} of ${edit.path}` };
}

function cellKind(language: string): "markdown" | "raw" | "code" {
  const lower = language.trim().toLowerCase();
  return lower === "markdown" ? "markdown" : lower === "raw" ? "raw" : "code";
}

function newCell(edit: NotebookCellEdit, nbformatMinor: number): Json {
  const kind = cellKind(edit.language);
  const cell: Json = { cell_type: kind };
  // nbformat 4.5 and later give every cell an id.
  if (nbformatMinor >= 5) cell["id"] = randomBytes(4).toString("hex");
  cell["metadata"] = {};
  if (kind === "code") {
    cell["execution_count"] = null;
    cell["outputs"] = [];
  }
  cell["source"] = sourceLines(normalizeNewlines(edit.newString));
  return cell;
}

function sourceText(source: unknown): string {
  if (typeof source === "string") return source;
  if (Array.isArray(source)) return source.filter((s): s is string => typeof s === "string").join("");
  return "";
}

/** "a\nb\n" -> ["a\n", "b\n"]; "" -> []. */
function sourceLines(text: string): string[] {
  if (text === "") return [];
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

function indentOf(text: string): number {
  const match = /\n( +)"/.exec(text);
  return match?.[1]?.length ?? 1;
}

function serialize(notebook: Json, indent: number): string {
  return `${JSON.stringify(notebook, null, indent)}\n`;
}
