/**
 * The pure part of file edits: newline normalization, exact string
 * replacement (exactly once unless replace_all), and a line diff for the edit
 * card (lines added/removed + a unified diff text).
 */

/** CRLF and lone CR become LF. */
export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** Non-overlapping occurrences of `needle` (which must not be empty). */
export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

export interface StrReplaceInput {
  path: string;
  /** Current file content, already LF-normalized ("" for a missing file). */
  before: string;
  fileExists: boolean;
  oldString: string;
  newString: string;
  replaceAll: boolean;
}

export type StrReplaceResult =
  | { kind: "ok"; after: string; replacements: number }
  /** The edit cannot be applied; `message` is what the model sees. */
  | { kind: "error"; message: string; fileNotFound: boolean };

export function applyStrReplace(input: StrReplaceInput): StrReplaceResult {
  const oldString = normalizeNewlines(input.oldString);
  const newString = normalizeNewlines(input.newString);
  const { path, before } = input;
  const fail = (message: string, fileNotFound = false): StrReplaceResult => ({ kind: "error", message, fileNotFound });
  if (oldString === newString) return fail("old_string and new_string are identical; there is nothing to change.");
  if (oldString === "") {
    if (before === "") return { kind: "ok", after: newString, replacements: 1 };
    return fail(`old_string is empty but ${path} is not; give the exact text to replace, or use Write to replace the whole file.`);
  }
  if (!input.fileExists) return fail(`File not found: ${path}`, true);
  const count = countOccurrences(before, oldString);
  if (count === 0) {
    return fail(`old_string was not found in ${path}. Read the file again and copy the text exactly, including whitespace and indentation.`);
  }
  if (count > 1 && !input.replaceAll) {
    return fail(
      `old_string occurs ${count} times in ${path}; include more surrounding lines to make it unique, or set replace_all to true.`,
    );
  }
  if (input.replaceAll) return { kind: "ok", after: before.split(oldString).join(newString), replacements: count };
  const at = before.indexOf(oldString);
  return { kind: "ok", after: before.slice(0, at) + newString + before.slice(at + oldString.length), replacements: 1 };
}

export interface LineDiff {
  linesAdded: number;
  linesRemoved: number;
  /** Unified diff ("" when nothing changed). */
  diff: string;
}

type DiffOp = { kind: "eq" | "del" | "add"; text: string };

const CONTEXT_LINES = 3;
/** Above this many cells the changed middle is treated as one block replacement. */
const MAX_LCS_CELLS = 4_000_000;

export function diffLines(path: string, before: string, after: string): LineDiff {
  const ops = diffOps(splitLines(before), splitLines(after));
  const linesAdded = ops.filter((o) => o.kind === "add").length;
  const linesRemoved = ops.filter((o) => o.kind === "del").length;
  if (linesAdded === 0 && linesRemoved === 0) return { linesAdded, linesRemoved, diff: "" };
  return { linesAdded, linesRemoved, diff: [`--- ${path}`, `+++ ${path}`, ...hunks(ops)].join("\n") };
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function diffOps(a: string[], b: string[]): DiffOp[] {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix += 1;
  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  const eq = (lines: string[]): DiffOp[] => lines.map((text) => ({ kind: "eq", text }));
  return [...eq(a.slice(0, prefix)), ...middleOps(midA, midB), ...eq(a.slice(a.length - suffix))];
}

function middleOps(a: string[], b: string[]): DiffOp[] {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0 || n * m > MAX_LCS_CELLS) {
    return [...a.map((text): DiffOp => ({ kind: "del", text })), ...b.map((text): DiffOp => ({ kind: "add", text }))];
  }
  // lcs[i * (m + 1) + j] = LCS length of a[i..] and b[j..]
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i * width + j] =
        a[i] === b[j] ? (lcs[(i + 1) * width + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * width + j] ?? 0, lcs[i * width + j + 1] ?? 0);
    }
  }
  const ops: DiffOp[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: "eq", text: a[i] ?? "" });
      i += 1;
      j += 1;
    } else if ((lcs[(i + 1) * width + j] ?? 0) >= (lcs[i * width + j + 1] ?? 0)) {
      ops.push({ kind: "del", text: a[i] ?? "" });
      i += 1;
    } else {
      ops.push({ kind: "add", text: b[j] ?? "" });
      j += 1;
    }
  }
  for (; i < n; i += 1) ops.push({ kind: "del", text: a[i] ?? "" });
  for (; j < m; j += 1) ops.push({ kind: "add", text: b[j] ?? "" });
  return ops;
}

function hunks(ops: DiffOp[]): string[] {
  const changed = ops.flatMap((op, index) => (op.kind === "eq" ? [] : [index]));
  const ranges: Array<[number, number]> = [];
  for (const index of changed) {
    const start = Math.max(0, index - CONTEXT_LINES);
    const end = Math.min(ops.length, index + CONTEXT_LINES + 1);
    const last = ranges[ranges.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else ranges.push([start, end]);
  }
  // 1-based line numbers of each op in the old and new file
  const oldLine: number[] = [];
  const newLine: number[] = [];
  let o = 1;
  let n = 1;
  for (const op of ops) {
    oldLine.push(o);
    newLine.push(n);
    if (op.kind !== "add") o += 1;
    if (op.kind !== "del") n += 1;
  }
  const out: string[] = [];
  for (const [start, end] of ranges) {
    const slice = ops.slice(start, end);
    const oldCount = slice.filter((op) => op.kind !== "add").length;
    const newCount = slice.filter((op) => op.kind !== "del").length;
    const oldStart = oldCount === 0 ? (oldLine[start] ?? 1) - 1 : (oldLine[start] ?? 1);
    const newStart = newCount === 0 ? (newLine[start] ?? 1) - 1 : (newLine[start] ?? 1);
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const op of slice) out.push(`${op.kind === "eq" ? " " : op.kind === "del" ? "-" : "+"}${op.text}`);
  }
  return out;
}
