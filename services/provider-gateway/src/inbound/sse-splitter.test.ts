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
