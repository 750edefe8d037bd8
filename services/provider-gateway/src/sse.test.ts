import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readSseEvents, type SseEvent } from "./sse.ts";
import { sseTextInReads, wholeTextEvents } from "./testing/sse-reads.ts";

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
    await fc.assert(
      fc.asyncProperty(sseTextInReads(), async ({ text, reads }) => {
        expect(await parse(reads)).toEqual(wholeTextEvents(text));
      }),
      { numRuns: 3000 },
    );
  });
});
