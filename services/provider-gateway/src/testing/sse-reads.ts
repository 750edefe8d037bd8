/**
 * For the property tests of the two SSE readers (sse.ts and the relay's
 * inbound/sse-splitter.ts): random SSE text cut into random reads, and the
 * events of that text read whole, one line at a time after a single split on
 * every line end, which is what either reader must give however the reads
 * fall.
 */
import fc from "fast-check";
import { sseField, type SseEvent } from "../sse.ts";

/** SSE text from fields, comments and every kind of line end, and the same text cut into reads. */
export function sseTextInReads(): fc.Arbitrary<{ readonly text: string; readonly reads: readonly string[] }> {
  const piece = fc.constantFrom("data: a", "data:b", "event: e", ": note", "data: ✓", "\n", "\r", "\r\n", "\n\n", "\r\r", "x");
  return fc.tuple(fc.array(piece, { maxLength: 16 }), fc.array(fc.nat(), { maxLength: 6 })).map(([pieces, cuts]) => {
    const text = pieces.join("");
    const at = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
    const ends = [...at, text.length];
    return { text, reads: [0, ...at].map((from, k) => text.slice(from, ends[k])) };
  });
}

/** The events of the whole `text`; the last is not terminated when no blank line ended it. */
export function wholeTextEvents(text: string): SseEvent[] {
  const lines = text.split(/\r\n|\r|\n/);
  // After a final line end the split leaves an empty piece that is no line.
  if (/[\r\n]$/.test(text)) lines.pop();
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
    const field = sseField(line);
    if (field?.name === "data") data.push(field.value);
    else if (field?.name === "event") event = field.value;
  }
  dispatch(false);
  return events;
}
