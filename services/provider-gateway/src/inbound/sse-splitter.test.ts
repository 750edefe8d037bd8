import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sseTextInReads, wholeTextEvents } from "../testing/sse-reads.ts";
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
    fc.assert(
      fc.property(sseTextInReads(), ({ text, reads }) => {
        const splitter = new SseSplitter();
        const events = reads.flatMap((read) => splitter.push(read));
        expect(text.startsWith(events.map((e) => e.raw).join(""))).toBe(true);
        // The splitter gives the events a blank line ended; it cannot tell an empty data line from none.
        const withData = (list: readonly { event: string | undefined; data: string }[]) => list.filter((e) => e.data !== "").map((e) => [e.event, e.data]);
        expect(withData(events)).toEqual(withData(wholeTextEvents(text).filter((e) => e.terminated)));
      }),
      { numRuns: 3000 },
    );
  });
});

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
