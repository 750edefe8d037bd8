import { readdirSync, readFileSync } from "node:fs";
import { PROVIDER_FIXTURES_DIR } from "@byok/test-support/fixtures";
import { describe, expect, it } from "vitest";
import type { ProviderKind } from "@byok/platform";
import { SseSplitter } from "./sse-splitter.ts";
import { streamWatch } from "./stream-watch.ts";

const KINDS: readonly ProviderKind[] = ["openai-chat", "openai-responses", "anthropic"];

describe("StreamWatch.mayMatterBytes", () => {
  it("is true for every recorded event whose text may matter, and false for a plain content delta", () => {
    for (const kind of KINDS) {
      const watch = streamWatch(kind, { dropUsageChunk: true });
      const dir = `${PROVIDER_FIXTURES_DIR}/${kind}`;
      let mattering = 0;
      for (const name of readdirSync(dir).filter((file) => file.endsWith(".sse"))) {
        for (const event of new SseSplitter().push(readFileSync(`${dir}/${name}`, "utf8"))) {
          if (!watch.mayMatter(event.raw)) continue;
          mattering++;
          expect(watch.mayMatterBytes(Buffer.from(event.raw)), `${kind}/${name}: ${event.raw.slice(0, 80)}`).toBe(true);
        }
      }
      expect(mattering, kind).toBeGreaterThan(0);
    }
    expect(streamWatch("openai-chat", { dropUsageChunk: false }).mayMatterBytes(Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'))).toBe(false);
  });
});
