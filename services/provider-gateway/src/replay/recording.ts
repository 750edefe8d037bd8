/**
 * Recorded provider streams -> the HTTP body an endpoint would send, as a list
 * of complete SSE events (each string ends with its blank-line separator, so
 * joining them gives the body). Shared by the replay CLI and the test mock LLM
 * so that both serve a recording the same way.
 *
 * Formats (see packages/test-support/fixtures/README.md):
 * - `.sse`: the raw body. Served byte for byte; it is only cut at event
 *   boundaries (blank lines, `\n` or `\r\n`) so a server can pause or
 *   disconnect after N events.
 * - `.jsonl`: one `data:` payload per line, the `event:` lines, blank lines and
 *   `[DONE]` dropped by the recorder. Rebuilt as:
 *   - openai-responses / anthropic: `event: <payload.type>` + `data: <line>`
 *     (both endpoints name every event after its JSON `type`);
 *   - openai-chat: `data: <line>` only, plus a final `data: [DONE]` when the
 *     recording implies the server sent one: some choice carries a non-null
 *     `finish_reason` and no payload carries a top-level `error` (OpenAI ends
 *     every finished stream with `[DONE]`; error streams end without it).
 */
import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";

export type RecordingFlavor = "openai-chat" | "openai-responses" | "anthropic";
export type RecordingFormat = "sse" | "jsonl";

const FLAVORS: readonly RecordingFlavor[] = ["openai-chat", "openai-responses", "anthropic"];

export function isRecordingFlavor(value: string): value is RecordingFlavor {
  return (FLAVORS as readonly string[]).includes(value);
}

/** The format named by the file extension, or undefined for anything else. */
export function recordingFormatOf(path: string): RecordingFormat | undefined {
  if (path.endsWith(".sse")) return "sse";
  if (path.endsWith(".jsonl")) return "jsonl";
  return undefined;
}

/** The endpoint kind of a fixture under fixtures/providers/<kind>/, if the folder says so. */
export function recordingFlavorOf(path: string): RecordingFlavor | undefined {
  const folder = basename(dirname(path));
  return isRecordingFlavor(folder) ? folder : undefined;
}

/** Split a raw SSE body into events, keeping every byte (separators stay with the event before them). */
export function splitSseEvents(body: string): string[] {
  const events: string[] = [];
  const separator = /\r\n\r\n|\n\n|\r\r/g;
  let start = 0;
  for (let m = separator.exec(body); m !== null; m = separator.exec(body)) {
    const end = m.index + m[0].length;
    events.push(body.slice(start, end));
    start = end;
  }
  if (start < body.length) events.push(body.slice(start));
  return events;
}

/** JSON payloads (one per `.jsonl` line) framed as the endpoint frames them. */
export function jsonPayloadsToSseEvents(lines: readonly string[], flavor: RecordingFlavor): string[] {
  const events: string[] = [];
  let finished = false;
  let errored = false;
  for (const line of lines) {
    const payload: unknown = JSON.parse(line);
    switch (flavor) {
      case "openai-chat": {
        if (hasKey(payload, "error")) errored = true;
        if (hasFinishReason(payload)) finished = true;
        events.push(`data: ${line}\n\n`);
        break;
      }
      case "openai-responses":
      case "anthropic": {
        const type = isRecord(payload) && typeof payload["type"] === "string" ? payload["type"] : undefined;
        events.push(type === undefined ? `data: ${line}\n\n` : `event: ${type}\ndata: ${line}\n\n`);
        break;
      }
      default: {
        const never: never = flavor;
        throw new Error(`unknown recording flavor ${String(never)}`);
      }
    }
  }
  if (flavor === "openai-chat" && finished && !errored) events.push("data: [DONE]\n\n");
  return events;
}

/** The SSE events of a recording text in the given format. */
export function recordingToSseEvents(text: string, format: RecordingFormat, flavor: RecordingFlavor): string[] {
  switch (format) {
    case "sse":
      return splitSseEvents(text);
    case "jsonl":
      return jsonPayloadsToSseEvents(
        text.split(/\r?\n/).filter((l) => l.trim() !== ""),
        flavor,
      );
    default: {
      const never: never = format;
      throw new Error(`unknown recording format ${String(never)}`);
    }
  }
}

/** Read a `.sse` / `.jsonl` recording file as SSE events. */
export function readRecording(path: string, flavor: RecordingFlavor): string[] {
  const format = recordingFormatOf(path);
  if (format === undefined) throw new Error(`${path}: not a recording (expected .sse or .jsonl)`);
  return recordingToSseEvents(readFileSync(path, "utf8"), format, flavor);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasKey(value: unknown, key: string): boolean {
  return isRecord(value) && value[key] !== undefined && value[key] !== null;
}

function hasFinishReason(value: unknown): boolean {
  if (!isRecord(value) || !Array.isArray(value["choices"])) return false;
  return value["choices"].some((c: unknown) => isRecord(c) && typeof c["finish_reason"] === "string");
}
