import { describe, expect, it } from "vitest";
import { ArgReader, clipMiddle, parseToolArgs, toModelText } from "./tool-args.ts";

describe("toModelText", () => {
  it("passes strings through and JSON-encodes objects, arrays, numbers, booleans and null", () => {
    expect(toModelText("plain text")).toBe("plain text");
    expect(toModelText({ a: 1, b: ["x"] })).toBe('{"a":1,"b":["x"]}');
    expect(toModelText([1, "two", null])).toBe('[1,"two",null]');
    expect(toModelText(42)).toBe("42");
    expect(toModelText(0.5)).toBe("0.5");
    expect(toModelText(false)).toBe("false");
    expect(toModelText(null)).toBe("null");
    expect(toModelText(12n)).toBe("12");
    expect(toModelText({ size: 3n })).toBe('{"size":"3"}');
  });
});

describe("parseToolArgs", () => {
  it("accepts a JSON object and treats empty text as {}", () => {
    expect(parseToolArgs("Read", '{"path":"/a"}')).toEqual({ kind: "ok", args: { path: "/a" } });
    expect(parseToolArgs("Read", "  ")).toEqual({ kind: "ok", args: {} });
  });

  it("turns broken JSON and non-objects into an error message for the model", () => {
    const broken = parseToolArgs("Read", '{"path": "/a"');
    expect(broken.kind).toBe("invalid");
    if (broken.kind === "invalid") expect(broken.error).toMatch(/^Invalid arguments for Read: not valid JSON/);
    expect(parseToolArgs("Read", "[1]")).toEqual({ kind: "invalid", error: "Invalid arguments for Read: expected a JSON object." });
    expect(parseToolArgs("Read", "null").kind).toBe("invalid");
  });
});

describe("ArgReader", () => {
  it("accepts numeric strings and boolean strings, and rejects wrong types with one message", () => {
    const reader = new ArgReader("Grep", { n: "12", b: "true", bad: 1.5, s: 3, flag: "yes" });
    expect(reader.optionalInteger("n")).toBe(12);
    expect(reader.optionalBoolean("b")).toBe(true);
    expect(reader.optionalInteger("bad")).toBeUndefined();
    expect(reader.optionalString("s")).toBe("3");
    expect(reader.optionalBoolean("flag")).toBeUndefined();
    expect(reader.requiredString("missing")).toBe("");
    expect(reader.error()).toBe(
      'Invalid arguments for Grep: "bad" must be an integer; "flag" must be a boolean; "missing" is required.',
    );
  });

  it("checks integer bounds and regular expressions", () => {
    const reader = new ArgReader("AwaitShell", { ms: -1, re: "(" });
    expect(reader.optionalInteger("ms", { min: 0 })).toBeUndefined();
    expect(reader.optionalRegex("re")).toBeUndefined();
    expect(reader.error()).toMatch(/"ms" must be at least 0; "re" is not a valid regular expression/);
  });

  it("accepts an object given as JSON text", () => {
    const reader = new ArgReader("CallMcpTool", { arguments: '{"q":"x"}' });
    expect(reader.optionalObject("arguments")).toEqual({ q: "x" });
    expect(reader.error()).toBeUndefined();
  });
});

describe("clipMiddle", () => {
  it("keeps head and tail and says how much was left out", () => {
    expect(clipMiddle("short", 10)).toBe("short");
    expect(clipMiddle("0123456789abcdef", 8)).toBe("0123\n[... 8 characters omitted ...]\ncdef");
  });
});
