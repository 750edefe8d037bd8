import { describe, expect, it } from "vitest";
import { editNotebookCell, type NotebookCellEdit } from "./notebook-cells.ts";

const NOTEBOOK = `${JSON.stringify(
  {
    cells: [
      { cell_type: "markdown", id: "m1", metadata: {}, source: ["# Title\n", "Intro"] },
      { cell_type: "code", id: "c1", execution_count: 3, metadata: {}, outputs: [{ output_type: "stream", name: "stdout", text: ["4\n"] }], source: "x = 2\nprint(x * 2)" },
    ],
    metadata: { kernelspec: { name: "python3" } },
    nbformat: 4,
    nbformat_minor: 5,
  },
  null,
  1,
)}\n`;

function edit(overrides: Partial<NotebookCellEdit>): NotebookCellEdit {
  return { path: "nb.ipynb", cellIndex: 1, isNewCell: false, language: "python", oldString: "x = 2", newString: "x = 3", ...overrides };
}

function cells(text: string): Array<Record<string, unknown>> {
  return (JSON.parse(text) as { cells: Array<Record<string, unknown>> }).cells;
}

describe("editNotebookCell", () => {
  it("replaces text in one cell, clears a code cell's outputs and keeps Jupyter's layout", () => {
    const result = editNotebookCell(NOTEBOOK, edit({}));
    if (result.kind !== "ok") throw new Error(result.message);
    expect(result.summary).toBe("Edited cell 1 of nb.ipynb");
    const [markdown, code] = cells(result.after);
    expect(code).toMatchObject({ source: ["x = 3\n", "print(x * 2)"], outputs: [], execution_count: null, id: "c1" });
    expect(markdown).toEqual({ cell_type: "markdown", id: "m1", metadata: {}, source: ["# Title\n", "Intro"] });
    expect(result.after.startsWith('{\n "cells": [')).toBe(true);
    expect(result.after.endsWith("}\n")).toBe(true);
  });

  it("inserts a new cell of the given kind at the index (with an id on nbformat 4.5)", () => {
    const result = editNotebookCell(NOTEBOOK, edit({ cellIndex: 1, isNewCell: true, language: "markdown", oldString: "", newString: "## Step 2\nMore" }));
    if (result.kind !== "ok") throw new Error(result.message);
    const inserted = cells(result.after)[1];
    expect(inserted).toMatchObject({ cell_type: "markdown", metadata: {}, source: ["## Step 2\n", "More"] });
    expect(inserted?.["id"]).toMatch(/^[0-9a-f]{8}$/);
    expect(cells(result.after)).toHaveLength(3);
  });

  it("creates a missing notebook when inserting the first cell", () => {
    const result = editNotebookCell(undefined, edit({ cellIndex: 0, isNewCell: true, oldString: "", newString: "print('hi')" }));
    if (result.kind !== "ok") throw new Error(result.message);
    expect(JSON.parse(result.after)).toMatchObject({ nbformat: 4, cells: [{ cell_type: "code", outputs: [], source: ["print('hi')"] }] });
  });

  it("explains what is wrong: unknown cell, text not found or not unique, missing notebook, not a notebook", () => {
    const fail = (before: string | undefined, e: Partial<NotebookCellEdit>) => {
      const result = editNotebookCell(before, edit(e));
      return result.kind === "error" ? result.message : "ok";
    };
    expect(fail(NOTEBOOK, { cellIndex: 5 })).toBe("cell_idx 5 does not exist: nb.ipynb has 2 cells (0 to 1).");
    expect(fail(NOTEBOOK, { oldString: "y = 1" })).toMatch(/old_string was not found in nb.ipynb cell 1/);
    expect(fail(NOTEBOOK, { cellIndex: 0, oldString: "" })).toMatch(/old_string is empty but cell 0 is not/);
    expect(fail(NOTEBOOK, { isNewCell: true, cellIndex: 3, oldString: "" })).toMatch(/cell_idx 3 is past the end: nb.ipynb has 2 cells \(use 2 to append\)/);
    expect(fail(undefined, {})).toMatch(/Notebook not found: nb.ipynb/);
    expect(fail("not json", {})).toMatch(/not a notebook: not valid JSON/);
    expect(fail('{"cells": 3}', {})).toMatch(/not a Jupyter notebook/);
  });
});
