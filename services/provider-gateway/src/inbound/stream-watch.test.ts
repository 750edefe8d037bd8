import { readdirSync } from "node:fs";
import { PROVIDER_FIXTURES_DIR } from "@byok/test-support/fixtures";
import { describe, expect, it } from "vitest";
import type { ProviderKind } from "@byok/platform";
import fc from "fast-check";
import { readRecording } from "../replay/recording.ts";
import { SseSplitter } from "./sse-splitter.ts";
import { streamWatch } from "./stream-watch.ts";

const KINDS: readonly ProviderKind[] = ["openai-chat", "openai-responses", "anthropic"];

describe("StreamWatch.mayMatterBytes", () => {
  it("is true for every recorded event whose text may matter, and false for a plain content delta", () => {
    for (const kind of KINDS) {
      const watch = streamWatch(kind, { dropUsageChunk: true });
      const dir = `${PROVIDER_FIXTURES_DIR}/${kind}`;
      let mattering = 0;
      for (const name of readdirSync(dir).filter((file) => file.endsWith(".sse") || file.endsWith(".jsonl"))) {
        for (const event of new SseSplitter().push(readRecording(`${dir}/${name}`, kind).join(""))) {
          if (!watch.mayMatter(event.raw)) continue;
          mattering++;
          expect(watch.mayMatterBytes(Buffer.from(event.raw)), `${kind}/${name}: ${event.raw.slice(0, 80)}`).toBe(true);
        }
      }
      expect(mattering, kind).toBeGreaterThan(0);
    }
    expect(streamWatch("openai-chat", { dropUsageChunk: false }).mayMatterBytes(Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'))).toBe(false);
  });

  it("passes a current OpenAI chunk with \"usage\":null on as bytes, and never misses a usage object", () => {
    const watch = streamWatch("openai-chat", { dropUsageChunk: false });
    const chunk = (usage: string) => Buffer.from(`data: {"choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":${usage},"obfuscation":"Qup1"}\n\n`);
    expect(watch.mayMatterBytes(chunk("null"))).toBe(false);
    expect(watch.mayMatterBytes(chunk('{"prompt_tokens":9}'))).toBe(true);
    expect(watch.mayMatterBytes(Buffer.from('data: {"usage" :\n {"total_tokens":1}}\n\n'))).toBe(true);
    expect(watch.mayMatterBytes(Buffer.from('data: {"usage":\u00a0{"total_tokens":1}}\n\n'))).toBe(true);
    // Content that mentions the key is no usage either way.
    expect(watch.mayMatterBytes(Buffer.from('data: {"choices":[{"delta":{"content":"\\"usage\\" is a word"}}],"usage":null}\n\n'))).toBe(false);
  });

  it("is true wherever the text test is true, for any text around the usage key (property)", () => {
    const watch = streamWatch("openai-chat", { dropUsageChunk: false });
    const piece = fc.constantFrom('"usage"', ":", "{", "null", " ", "\n", "\t", "\u00a0", "\u2028", "x", '"', "é", "[DONE]", "data: ");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        if (watch.mayMatter(text)) expect(watch.mayMatterBytes(Buffer.from(text))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it("sends only a recorded stream's few events that carry usage, an error or the end down the decoding path", () => {
    for (const kind of KINDS) {
      const dir = `${PROVIDER_FIXTURES_DIR}/${kind}`;
      for (const name of readdirSync(dir).filter((file) => file.endsWith(".sse") || file.endsWith(".jsonl"))) {
        const watch = streamWatch(kind, { dropUsageChunk: false });
        const events = new SseSplitter().push(readRecording(`${dir}/${name}`, kind).join(""));
        // A current OpenAI stream has "usage":null in all of its 304 events; before the precise check, each one was decoded.
        expect(events.filter((event) => watch.mayMatterBytes(Buffer.from(event.raw))).length, `${kind}/${name}`).toBeLessThanOrEqual(4);
      }
    }
  });
});
