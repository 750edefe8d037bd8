import { describe, expect, it } from "vitest";
import { applyStrReplace, countOccurrences, diffLines, normalizeNewlines } from "./edit-engine.ts";

const base = { path: "/w/a.ts", fileExists: true, replaceAll: false };

describe("normalizeNewlines", () => {
  it("turns CRLF and lone CR into LF", () => {
    expect(normalizeNewlines("a\r\nb\rc\nd")).toBe("a\nb\nc\nd");
  });
});

describe("countOccurrences", () => {
  it("counts non-overlapping matches", () => {
    expect(countOccurrences("aaaa", "aa")).toBe(2);
    expect(countOccurrences("abc", "x")).toBe(0);
  });
});

describe("applyStrReplace", () => {
  it("replaces a unique match and keeps the rest of the file", () => {
    const r = applyStrReplace({ ...base, before: "one\ntwo\nthree\n", oldString: "two", newString: "2" });
    expect(r).toEqual({ kind: "ok", after: "one\n2\nthree\n", replacements: 1 });
  });

  it("matches an old_string sent with CRLF against the LF-normalized file", () => {
    const r = applyStrReplace({ ...base, before: "a\nb\nc\n", oldString: "a\r\nb", newString: "x\r\ny" });
    expect(r).toEqual({ kind: "ok", after: "x\ny\nc\n", replacements: 1 });
  });

  it("does not interpret $ patterns in the replacement", () => {
    const r = applyStrReplace({ ...base, before: "price", oldString: "price", newString: "$& $1 $$" });
    expect(r).toEqual({ kind: "ok", after: "$& $1 $$", replacements: 1 });
  });

  it("fails when old_string is missing", () => {
    const r = applyStrReplace({ ...base, before: "abc", oldString: "xyz", newString: "q" });
    expect(r.kind).toBe("error");
    if (r.kind === "error") expect(r.message).toMatch(/old_string was not found in \/w\/a\.ts/);
  });

  it("fails when old_string occurs twice without replace_all", () => {
    const r = applyStrReplace({ ...base, before: "x = 1\nx = 1\n", oldString: "x = 1", newString: "x = 2" });
    expect(r.kind).toBe("error");
    if (r.kind === "error") expect(r.message).toMatch(/occurs 2 times/);
  });

  it("replaces every occurrence with replace_all", () => {
    const r = applyStrReplace({ ...base, replaceAll: true, before: "foo bar foo\nfoo", oldString: "foo", newString: "baz" });
    expect(r).toEqual({ kind: "ok", after: "baz bar baz\nbaz", replacements: 3 });
  });

  it("refuses identical strings and empty old_string on a non-empty file", () => {
    expect(applyStrReplace({ ...base, before: "a", oldString: "a", newString: "a" }).kind).toBe("error");
    expect(applyStrReplace({ ...base, before: "a", oldString: "", newString: "b" }).kind).toBe("error");
  });

  it("creates content from an empty old_string when the file is missing or empty", () => {
    const r = applyStrReplace({ ...base, fileExists: false, before: "", oldString: "", newString: "new\r\nfile" });
    expect(r).toEqual({ kind: "ok", after: "new\nfile", replacements: 1 });
  });

  it("reports a missing file for a non-empty old_string", () => {
    const r = applyStrReplace({ ...base, fileExists: false, before: "", oldString: "x", newString: "y" });
    expect(r).toEqual({ kind: "error", message: "File not found: /w/a.ts", fileNotFound: true });
  });
});

describe("diffLines", () => {
  it("counts changed lines and renders a unified hunk with context", () => {
    const before = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n";
    const after = "l1\nl2\nl3\nl4\nL5\nl6\nl7\nl8\nl9\n";
    const d = diffLines("/w/f.txt", before, after);
    expect(d.linesAdded).toBe(2);
    expect(d.linesRemoved).toBe(1);
    expect(d.diff).toBe(
      ["--- /w/f.txt", "+++ /w/f.txt", "@@ -2,7 +2,8 @@", " l2", " l3", " l4", "-l5", "+L5", " l6", " l7", " l8", "+l9"].join("\n"),
    );
  });

  it("splits far-apart changes into separate hunks", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    const changed = [...lines];
    changed[1] = "CHANGED 2";
    changed[27] = "CHANGED 28";
    const d = diffLines("/f", lines.join("\n"), changed.join("\n"));
    expect(d.diff.match(/^@@/gm)).toHaveLength(2);
    expect(d.linesAdded).toBe(2);
    expect(d.linesRemoved).toBe(2);
  });

  it("handles new and emptied files and reports no diff for equal content", () => {
    expect(diffLines("/f", "", "a\nb\n")).toMatchObject({ linesAdded: 2, linesRemoved: 0 });
    expect(diffLines("/f", "a\nb\n", "")).toMatchObject({ linesAdded: 0, linesRemoved: 2 });
    expect(diffLines("/f", "same\n", "same\n")).toEqual({ linesAdded: 0, linesRemoved: 0, diff: "" });
  });
});
