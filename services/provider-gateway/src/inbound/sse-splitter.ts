/**
 * Splits SSE text into complete events as it arrives, keeping each event's
 * raw text (terminator included) so a relay can pass it on unchanged. Fields
 * are read by sse.ts's `sseField` (`event:` and `data:` lines, one space after
 * the colon removed, comments ignored); an event ends at a blank
 * line (two line ends in a row, each `\n`, `\r\n` or `\r`).
 */

import { sseField } from "../sse.ts";

export interface RawSseEvent {
  readonly raw: string;
  readonly event: string | undefined;
  readonly data: string;
}

/**
 * A line end (CRLF, LF or CR) followed by another: the blank line that ends an event, with mixed
 * line ends too. At one index the longer form wins (a CR followed by LF is one CRLF). Only a CR at
 * the very end of the text so far is ambiguous (the first half of a CRLF, or a line end of its own):
 * the event then ends there, and the LF that may follow goes with the next event's raw text, as an
 * empty line that changes nothing in it.
 */
const BLANK_LINE = /\r\n\r\n|\r\n\r|\r\n\n|\r\r\n|\r\r|\n\r\n|\n\r|\n\n/g;
const LF = 10;
const CR = 13;

export class SseSplitter {
  #buffer = "";

  /** The events completed by `text`, in order. */
  push(text: string): RawSseEvent[] {
    this.#buffer += text;
    const events: RawSseEvent[] = [];
    let start = 0;
    BLANK_LINE.lastIndex = 0;
    for (let match = BLANK_LINE.exec(this.#buffer); match !== null; match = BLANK_LINE.exec(this.#buffer)) {
      const end = match.index + match[0].length;
      events.push(parseEvent(this.#buffer.slice(start, end)));
      start = end;
    }
    if (start > 0) this.#buffer = this.#buffer.slice(start);
    return events;
  }

  /**
   * Whether push(text) would hand back whole events and keep nothing: nothing
   * is held from before and `text` ends at a blank line. Decided only for
   * `\n` line ends (what providers send); text with a `\r` is never called
   * complete, so it always goes through push.
   */
  completes(text: string): boolean {
    if (this.#buffer !== "" || text.length < 2 || text.charCodeAt(text.length - 1) !== LF || text.charCodeAt(text.length - 2) !== LF || text.includes("\r")) return false;
    // push pairs the newlines of a run from its start: a run of odd length leaves one behind.
    let run = 2;
    while (run < text.length && text.charCodeAt(text.length - 1 - run) === LF) run++;
    return run % 2 === 0;
  }

  /** completes() for raw bytes, before they are decoded (the same rule: `\n` line ends only). */
  completesBytes(chunk: Buffer): boolean {
    const last = chunk.length - 1;
    if (this.#buffer !== "" || chunk.length < 2 || chunk[last] !== LF || chunk[last - 1] !== LF || chunk.includes(CR)) return false;
    let run = 2;
    while (run < chunk.length && chunk[last - run] === LF) run++;
    return run % 2 === 0;
  }

  /** What is left when the stream ended (an event without its blank line), if anything. */
  flush(): RawSseEvent | undefined {
    const rest = this.#buffer;
    this.#buffer = "";
    return rest.trim() === "" ? undefined : parseEvent(rest);
  }
}

/** Fields are parsed on first use: a relay that only looks at a few events pays for those only. */
class LazyEvent implements RawSseEvent {
  readonly raw: string;
  #fields: { event: string | undefined; data: string } | undefined;

  constructor(raw: string) {
    this.raw = raw;
  }

  get event(): string | undefined {
    return this.#parsed().event;
  }

  get data(): string {
    return this.#parsed().data;
  }

  #parsed(): { event: string | undefined; data: string } {
    this.#fields ??= parseFields(this.raw);
    return this.#fields;
  }
}

function parseEvent(raw: string): RawSseEvent {
  return new LazyEvent(raw);
}

function parseFields(raw: string): { event: string | undefined; data: string } {
  let event: string | undefined;
  const data: string[] = [];
  for (const line of raw.split(/\r\n|\n|\r/)) {
    const field = line === "" ? undefined : sseField(line);
    if (field?.name === "data") data.push(field.value);
    else if (field?.name === "event") event = field.value;
  }
  return { event, data: data.join("\n") };
}
