/**
 * Live edit cards while the model is still generating Write/StrReplace/
 * EditNotebook arguments: decodes chosen top-level string fields of the streaming argument
 * JSON incrementally, so the file content can be shown as
 * tool_call_delta(edit_tool_call_delta) and the card can get its path as soon
 * as the path string is complete (cursor-agent-protocol §8.5).
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { toolCallCard } from "./cards.ts";

export type StreamedField =
  /** Decoded text appended to a field value. */
  | { kind: "text"; field: string; text: string }
  /** The field's string value is complete. */
  | { kind: "complete"; field: string; value: string };

/** Which arguments of an edit tool stream as the card's path and content. */
export interface EditStreamFields {
  path: "path" | "target_notebook";
  content: "contents" | "new_string";
}

export function editStreamFields(toolName: string): EditStreamFields | undefined {
  if (toolName === "Write") return { path: "path", content: "contents" };
  if (toolName === "StrReplace") return { path: "path", content: "new_string" };
  if (toolName === "EditNotebook") return { path: "target_notebook", content: "new_string" };
  return undefined;
}

const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * Incremental decoder for string fields of a JSON object arriving in pieces.
 * Only top-level fields named in `fields` are reported; anything that is not
 * well-formed JSON just stops producing output (the complete arguments are
 * validated separately).
 */
export class ArgsFieldStreamer {
  readonly #fields: ReadonlySet<string>;
  #depth = 0;
  #inString = false;
  #escape: "" | "\\" | "u" = "";
  #hex = "";
  #highSurrogate = "";
  /** At depth 1: the next string is a key (true) or a value (false). */
  #expectKey = true;
  #stringIsKey = false;
  #key = "";
  #current = "";
  #broken = false;

  constructor(fields: readonly string[]) {
    this.#fields = new Set(fields);
  }

  push(delta: string): StreamedField[] {
    const out: StreamedField[] = [];
    if (this.#broken) return out;
    let pending = "";
    const flush = () => {
      if (pending !== "" && this.#tracked()) out.push({ kind: "text", field: this.#key, text: pending });
      pending = "";
    };
    for (const ch of delta) {
      if (this.#inString) {
        const decoded = this.#stringChar(ch);
        if (decoded === undefined) continue;
        if (decoded === null) {
          flush();
          this.#closeString(out);
          continue;
        }
        this.#current += decoded;
        if (!this.#stringIsKey) pending += decoded;
        continue;
      }
      switch (ch) {
        case "{":
        case "[":
          this.#depth += 1;
          break;
        case "}":
        case "]":
          this.#depth -= 1;
          if (this.#depth === 1) this.#expectKey = false;
          break;
        case '"':
          this.#inString = true;
          this.#stringIsKey = this.#depth === 1 && this.#expectKey;
          this.#current = "";
          break;
        case ":":
          if (this.#depth === 1) this.#expectKey = false;
          break;
        case ",":
          if (this.#depth === 1) this.#expectKey = true;
          break;
        default:
          break;
      }
      if (this.#depth < 0) this.#broken = true;
    }
    flush();
    return out;
  }

  #tracked(): boolean {
    return this.#depth === 1 && !this.#stringIsKey && this.#fields.has(this.#key);
  }

  #closeString(out: StreamedField[]): void {
    this.#inString = false;
    if (this.#stringIsKey) {
      this.#key = this.#current;
    } else if (this.#tracked()) {
      out.push({ kind: "complete", field: this.#key, value: this.#current });
    }
  }

  /** Decoded text for one character inside a string; null = closing quote; undefined = nothing yet. */
  #stringChar(ch: string): string | null | undefined {
    if (this.#escape === "\\") {
      if (ch === "u") {
        this.#escape = "u";
        this.#hex = "";
        return undefined;
      }
      this.#escape = "";
      return this.#withSurrogate(SIMPLE_ESCAPES[ch] ?? ch);
    }
    if (this.#escape === "u") {
      this.#hex += ch;
      if (this.#hex.length < 4) return undefined;
      this.#escape = "";
      const code = Number.parseInt(this.#hex, 16);
      if (Number.isNaN(code)) return this.#withSurrogate("\uFFFD");
      if (code >= 0xd800 && code <= 0xdbff) {
        const dangling = this.#highSurrogate === "" ? "" : "\uFFFD";
        this.#highSurrogate = String.fromCharCode(code);
        return dangling === "" ? undefined : dangling;
      }
      return this.#withSurrogate(String.fromCharCode(code));
    }
    if (ch === "\\") {
      this.#escape = "\\";
      return undefined;
    }
    if (ch === '"') {
      // a high surrogate without its low half cannot be shown; drop it
      this.#highSurrogate = "";
      return null;
    }
    return this.#withSurrogate(ch);
  }

  #withSurrogate(text: string): string {
    if (this.#highSurrogate === "") return text;
    const high = this.#highSurrogate;
    this.#highSurrogate = "";
    const code = text.charCodeAt(0);
    return code >= 0xdc00 && code <= 0xdfff ? high + text : `\uFFFD${text}`;
  }
}

/** tool_call_delta payload for streamed edit content. */
export function editContentDelta(text: string): tools.ToolCallDelta {
  return create(tools.ToolCallDeltaSchema, { delta: { case: "editToolCallDelta", value: { streamContentDelta: text } } });
}

/** partial_tool_call card once the edit's path is known. */
export function editPathCard(callId: string, path: string): tools.ToolCall {
  return toolCallCard(callId, { case: "editToolCall", value: create(tools.EditToolCallSchema, { args: { path } }) });
}
