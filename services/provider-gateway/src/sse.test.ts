import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readSseEvents, type SseEvent } from "./sse.ts";

async function parse(chunks: readonly string[]): Promise<SseEvent[]> {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const events: SseEvent[] = [];
  for await (const event of readSseEvents(body)) events.push(event);
  return events;
}

describe("SSE parsing", () => {
  it("reads event names, joins data lines, drops comments and one leading space", async () => {
    expect(await parse([": OPENROUTER PROCESSING\n\nevent: ping\ndata:  {\"a\":1}\ndata: x\n\n"])).toEqual([{ event: "ping", data: ' {"a":1}\nx', terminated: true }]);
  });

  it("accepts \\r\\n, \\r and \\n line ends, also split across reads", async () => {
    const events = await parse(["data: one\r", "\n\r\ndata: two\r\rdata: th", "ree\n", "\n"]);
    expect(events.map((e) => e.data)).toEqual(["one", "two", "three"]);
  });

  it("keeps multi-byte characters split across reads", async () => {
    const bytes = new TextEncoder().encode("data: ✓ done\n\n");
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const event of readSseEvents(body)) events.push(event);
    expect(events[0]?.data).toBe("✓ done");
  });

  it("delivers an event left open at EOF as not terminated", async () => {
    expect(await parse(["data: a\n\ndata: {\"b\":"])).toEqual([
      { event: undefined, data: "a", terminated: true },
      { event: undefined, data: '{"b":', terminated: false },
    ]);
  });

  it("ignores events without data", async () => {
    expect(await parse(["event: x\n\n\n\ndata: y\n\n"])).toEqual([{ event: undefined, data: "y", terminated: true }]);
  });

  it("takes an LF as the second half of a CRLF only right after a read that ended with the CR", async () => {
    // Found by the property below: the CR that ended the first read was remembered past the lines
    // after it, and the blank line at the end was taken for the rest of that CRLF.
    expect(await parse(["\r", "\r\rdata: a\r\n\n"])).toEqual([{ event: undefined, data: "a", terminated: true }]);
  });

  it("reads the same events however the stream is cut into reads, as a whole-text reading does (property)", async () => {
    const piece = fc.constantFrom("data: a", "data:b", "event: e", ": note", "data: ✓", "\n", "\r", "\r\n", "\n\n", "\r\r", "x");
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 16 }), fc.array(fc.nat(), { maxLength: 6 }), async (pieces, cuts) => {
        const text = pieces.join("");
        const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...at].map((from, k) => text.slice(from, [...at, text.length][k]));
        expect(await parse(chunks)).toEqual(wholeTextEvents(text));
      }),
      { numRuns: 3000 },
    );
  });
});

/** The events of a whole stream by the spec's rules, read with one split on every line end: the reference for the property above. */
function wholeTextEvents(text: string): SseEvent[] {
  const lines = text.split(/\r\n|\r|\n/);
  const ended = /(\r\n|\r|\n)$/.test(text);
  // The last piece is an unfinished line only when the text does not end with a line end.
  if (ended) lines.pop();
  const events: SseEvent[] = [];
  let event: string | undefined;
  let data: string[] = [];
  const dispatch = (terminated: boolean): void => {
    if (data.length > 0) events.push({ event, data: data.join("\n"), terminated });
    event = undefined;
    data = [];
  };
  for (const line of lines) {
    if (line === "") {
      dispatch(true);
      continue;
    }
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
  }
  dispatch(false);
  return events;
}
