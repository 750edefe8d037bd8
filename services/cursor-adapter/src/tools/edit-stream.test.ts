import { describe, expect, it } from "vitest";
import { ArgsFieldStreamer, editContentDelta, editPathCard, editStreamFields, type StreamedField } from "./edit-stream.ts";

function feed(fields: string[], chunks: string[]): StreamedField[] {
  const streamer = new ArgsFieldStreamer(fields);
  return chunks.flatMap((c) => streamer.push(c));
}

function textOf(events: StreamedField[], field: string): string {
  return events.flatMap((e) => (e.kind === "text" && e.field === field ? [e.text] : [])).join("");
}

describe("ArgsFieldStreamer", () => {
  it("decodes a streamed string field across arbitrary chunk boundaries", () => {
    const json = JSON.stringify({ path: "/w/a.ts", contents: 'line "1"\n\ttab \\ slash é 😀 end' });
    for (const size of [1, 2, 3, 7, 1000]) {
      const chunks = json.match(new RegExp(`[\\s\\S]{1,${size}}`, "gu")) ?? [];
      const events = feed(["path", "contents"], chunks);
      expect(textOf(events, "contents")).toBe('line "1"\n\ttab \\ slash é 😀 end');
      expect(events.filter((e) => e.kind === "complete")).toEqual([
        { kind: "complete", field: "path", value: "/w/a.ts" },
        { kind: "complete", field: "contents", value: 'line "1"\n\ttab \\ slash é 😀 end' },
      ]);
    }
  });

  it("decodes \\u escapes, including surrogate pairs split across chunks", () => {
    const json = '{"new_string":"a\\u00e9\\ud83d\\ude00b"}';
    const chunks = [...json].map((c) => c);
    expect(textOf(feed(["new_string"], chunks), "new_string")).toBe("aé😀b");
  });

  it("ignores other fields, nested objects and keys that look like tracked fields", () => {
    const json = '{"meta":{"contents":"nested"},"note":"contents","contents":"real"}';
    const events = feed(["contents"], [json]);
    expect(textOf(events, "contents")).toBe("real");
  });

  it("knows which field streams as edit content", () => {
    expect(editStreamFields("Write")).toEqual({ path: "path", content: "contents" });
    expect(editStreamFields("StrReplace")).toEqual({ path: "path", content: "new_string" });
    expect(editStreamFields("EditNotebook")).toEqual({ path: "target_notebook", content: "new_string" });
    expect(editStreamFields("Read")).toBeUndefined();
    expect(editContentDelta("abc").delta).toMatchObject({ case: "editToolCallDelta", value: { streamContentDelta: "abc" } });
    expect(editPathCard("c", "/w/a").tool).toMatchObject({ case: "editToolCall", value: { args: { path: "/w/a" } } });
  });
});
