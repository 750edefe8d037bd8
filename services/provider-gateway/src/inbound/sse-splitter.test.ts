import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseSplitter } from "./sse-splitter.ts";

describe("SseSplitter", () => {
  it("gives complete events with their raw text, across chunk borders and line ends", () => {
    const splitter = new SseSplitter();
    expect(splitter.push("event: a\ndata: {\"x\"")).toEqual([]);
    const events = splitter.push(":1}\n\ndata: one\r\ndata: two\r\n\r\ndata: three\r\r: comment\ndata: four");
    expect(events.map((e) => [e.event, e.data])).toEqual([
      ["a", '{"x":1}'],
      [undefined, "one\ntwo"],
      [undefined, "three"],
    ]);
    expect(events.map((e) => e.raw).join("")).toBe('event: a\ndata: {"x":1}\n\ndata: one\r\ndata: two\r\n\r\ndata: three\r\r');
    expect(splitter.flush()).toMatchObject({ data: "four", raw: ": comment\ndata: four" });
  });
});

describe("SseSplitter, whatever the line ends and the reads", () => {
  it("ends an event at a blank line made of mixed line ends", () => {
    const events = new SseSplitter().push('data: {"a":1}\n\r\ndata: {"b":2}\r\n\rdata: {"c":3}\n\r');
    expect(events.map((e) => e.data)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("loses, merges and splits no event with data, and passes every character on once (property)", () => {
    const piece = fc.constantFrom("data: a", "data:b", "event: e", ": note", "data: ✓", "\n", "\r", "\r\n", "\n\n", "\r\r", "x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), fc.array(fc.nat(), { maxLength: 6 }), (pieces, cuts) => {
        const text = pieces.join("");
        const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
        const splitter = new SseSplitter();
        const events = [0, ...at].flatMap((from, k) => splitter.push(text.slice(from, [...at, text.length][k])));
        const raw = events.map((e) => e.raw).join("");
        expect(text.startsWith(raw)).toBe(true);
        const withData = (list: readonly { event: string | undefined; data: string }[]) => list.filter((e) => e.data !== "").map((e) => [e.event, e.data]);
        expect(withData(events)).toEqual(withData(endedEvents(text)));
      }),
      { numRuns: 3000 },
    );
  });
});

/** The events of `text` that a blank line ends, read line by line by the SSE rules (the reference above). */
function endedEvents(text: string): { event: string | undefined; data: string }[] {
  const lines = text.split(/\r\n|\r|\n/);
  // The last piece has no line end: an unfinished line, in an event no blank line ended.
  lines.pop();
  const events: { event: string | undefined; data: string }[] = [];
  let event: string | undefined;
  let data: string[] = [];
  for (const line of lines) {
    if (line === "") {
      if (data.length > 0) events.push({ event, data: data.join("\n") });
      event = undefined;
      data = [];
    } else if (!line.startsWith(":")) {
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
    }
  }
  return events;
}

describe("SseSplitter.completes", () => {
  it("is true only when push would give whole events and keep nothing", () => {
    const cases = ["data: a\n\n", "data: a\n\ndata: b\n\n", "data: a\n\n\n\n", "data: a\n\n\n", "data: a\n", "data: a", "data: a\r\n\r\n", "data: a\r\r", "\n\n", "\n"];
    for (const text of cases) {
      const probe = new SseSplitter();
      const complete = probe.completes(text);
      const reference = new SseSplitter();
      const raw = reference.push(text).map((e) => e.raw).join("");
      // complete => push consumed all of it; CR line ends are left to push.
      if (complete) expect(raw, JSON.stringify(text)).toBe(text);
      if (!text.includes("\r") && raw === text && text.endsWith("\n\n")) expect(complete, JSON.stringify(text)).toBe(true);
    }
    expect(new SseSplitter().completes("data: a\n\n\n")).toBe(false);
    const holding = new SseSplitter();
    holding.push("data: a");
    expect(holding.completes("\n\n")).toBe(false);
  });
});

describe("SseSplitter.completesBytes", () => {
  it("says of raw bytes what completes says of their text", () => {
    const cases = ["data: a\n\n", "data: a\n\ndata: b\n\n", "data: a\n\n\n\n", "data: a\n\n\n", "data: a\n", "data: a", "data: a\r\n\r\n", "data: a\r\r", "\n\n", "\n", 'data: {"content":"é"}\n\n'];
    for (const text of cases) expect(new SseSplitter().completesBytes(Buffer.from(text)), JSON.stringify(text)).toBe(new SseSplitter().completes(text));
    const holding = new SseSplitter();
    holding.push("data: a");
    expect(holding.completesBytes(Buffer.from("\n\n"))).toBe(false);
  });
});
