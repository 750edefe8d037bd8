/**
 * Server-sent events from a streaming HTTP body (provider-stream-semantics.md §0):
 * `\n`, `\r\n` and `\r` line ends; `data:` lines joined with `\n`; one space
 * after the colon removed; `:` comment lines and unknown fields ignored. An
 * event ends at a blank line; an event still open at EOF is delivered with
 * `terminated: false` (recorders and some servers drop the final blank line,
 * and a cut stream ends mid-event: the decoder tells the two apart by whether
 * the data parses).
 *
 * We parse the bytes ourselves instead of iterating the SDK's stream object:
 * the SDKs drop events that have no `event:` line (Anthropic) and end the
 * iteration silently on an aborted or half-closed body (OpenAI), while the
 * gateway must dispatch on the JSON and tell a terminal signal from EOF.
 */

export interface SseEvent {
  /** Value of the `event:` line, if any. */
  readonly event: string | undefined;
  readonly data: string;
  /** False for an event that was still open when the body ended. */
  readonly terminated: boolean;
}

/** `onChunk` is called as each chunk of the body arrives, before its events are parsed (metrics). */
export async function* readSseEvents(body: ReadableStream<Uint8Array>, onChunk?: () => void): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new TextDecoder("utf-8");
  const builder = new EventBuilder();
  let buffer = "";
  let pendingCr = false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onChunk?.();
      buffer += decoder.decode(value, { stream: true });
      let start = 0;
      if (pendingCr && buffer.length > 0) {
        // The previous read ended with a CR: an LF first in this one is the second half of its "\r\n".
        if (buffer.charCodeAt(0) === 10) start = 1;
        pendingCr = false;
      }
      // The next LF and CR at or after `start`, found by indexOf (a loop over every character was
      // about 2 % of the gateway's CPU); each is searched again only once passed.
      let lf = buffer.indexOf("\n", start);
      let cr = buffer.indexOf("\r", start);
      for (;;) {
        if (lf !== -1 && lf < start) lf = buffer.indexOf("\n", start);
        if (cr !== -1 && cr < start) cr = buffer.indexOf("\r", start);
        let i = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
        if (i === -1) break;
        const event = builder.line(buffer.slice(start, i));
        if (event !== undefined) yield event;
        if (buffer.charCodeAt(i) === 13) {
          if (i + 1 === buffer.length) pendingCr = true;
          else if (buffer.charCodeAt(i + 1) === 10) i++;
        }
        start = i + 1;
      }
      buffer = buffer.slice(start);
    }
    buffer += decoder.decode();
    if (buffer.length > 0) {
      const event = builder.line(buffer);
      if (event !== undefined) yield event;
    }
    const open = builder.flush();
    if (open !== undefined) yield open;
  } finally {
    reader.releaseLock();
  }
}

/** A non-blank line's field name and value (its one leading space removed); undefined for a comment. */
export function sseField(line: string): { readonly name: string; readonly value: string } | undefined {
  if (line.startsWith(":")) return undefined;
  const colon = line.indexOf(":");
  if (colon === -1) return { name: line, value: "" };
  const value = line.slice(colon + 1);
  return { name: line.slice(0, colon), value: value.startsWith(" ") ? value.slice(1) : value };
}

class EventBuilder {
  #event: string | undefined;
  #data: string[] = [];

  /** Feed one line (without its line end); returns an event at a blank line. */
  line(line: string): SseEvent | undefined {
    if (line === "") return this.#dispatch(true);
    const field = sseField(line);
    if (field?.name === "data") this.#data.push(field.value);
    else if (field?.name === "event") this.#event = field.value;
    return undefined;
  }

  flush(): SseEvent | undefined {
    return this.#dispatch(false);
  }

  #dispatch(terminated: boolean): SseEvent | undefined {
    const hasData = this.#data.length > 0;
    const event = hasData ? { event: this.#event, data: this.#data.join("\n"), terminated } : undefined;
    this.#event = undefined;
    this.#data = [];
    return event;
  }
}
