/**
 * End to end (real Postgres, NATS, HTTP): Anthropic prompt caching on a Claude
 * model. Three turns, the first with a tool round: every request carries its
 * cache_control breakpoints on the same stable positions (the system block and
 * the request level), each request body extends the previous one byte for
 * byte, and the cache read / write tokens the endpoint reports reach
 * turn_ended and the admin prompt-cache report (cached / input per
 * conversation and per model).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAdmin } from "../services/admin/src/testing/admin-cli.ts";
import { StoreClient } from "@byok/store-client";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import type { StaticMockResponse } from "@byok/test-support/mock-llm";
import { providerStream, type StreamAnswer } from "@byok/test-support/provider-streams";
import { readsOf } from "./long-sessions-support.ts";
import { finishedOk } from "./tools-support.ts";

/** An Anthropic Messages stream (text or one tool_use) reporting `uncached` input tokens beside the cache reads and writes. */
function anthropicStream(id: string, answer: StreamAnswer, usage: { uncached: number; cacheRead: number; cacheWrite: number; output: number }): StaticMockResponse {
  return providerStream("anthropic", id, answer, { input: usage.uncached + usage.cacheWrite + usage.cacheRead, output: usage.output, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite });
}

describe("Anthropic prompt caching", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway({ endpoint: "anthropic", model: { upstreamModel: "claude-sonnet-4-5", maxOutputTokens: 8192 } });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("puts cache_control on the same stable positions in every call, and cache tokens reach turn_ended and the cache report", async () => {
    gw.llm.enqueue(anthropicStream("m1", { call: { id: "toolu_read_a", name: "Read", args: { path: "/home/dev/project/a.ts" } } }, { uncached: 10, cacheWrite: 5000, cacheRead: 0, output: 30 }));
    gw.llm.enqueue(anthropicStream("m2", { text: "a.ts read." }, { uncached: 12, cacheWrite: 700, cacheRead: 5000, output: 8 }));
    gw.llm.enqueue(anthropicStream("m3", { text: "Second answer." }, { uncached: 9, cacheWrite: 60, cacheRead: 5700, output: 5 }));
    gw.llm.enqueue(anthropicStream("m4", { text: "Third answer." }, { uncached: 9, cacheWrite: 40, cacheRead: 5760, output: 5 }));

    const client = gw.client();
    const chat = client.conversation();
    const turn1 = await finishedOk(chat.send("Read a.ts", { modelId: gw.modelId, onExec: readsOf(20) }));
    const turn2 = await finishedOk(chat.send("And then?", { modelId: gw.modelId }));
    const turn3 = await finishedOk(chat.send("Anything else?", { modelId: gw.modelId }));
    for (const turn of [turn1, turn2, turn3]) expect(turn.violations).toEqual([]);

    const bodies = gw.llm.requestsTo("anthropic");
    expect(bodies).toHaveLength(4);
    for (const request of bodies) {
      const body = request.body as { system: Array<{ cache_control?: unknown }>; cache_control?: unknown; tools: unknown[]; messages: unknown[] };
      expect(body.system.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
      expect(body.cache_control).toEqual({ type: "ephemeral" });
      // No breakpoint moves inside the history: exactly the two above.
      expect(request.rawBody.match(/"cache_control"/g)).toHaveLength(2);
    }
    for (let i = 1; i < bodies.length; i++) {
      const previous = bodies[i - 1]!.rawBody;
      expect(bodies[i]!.rawBody.startsWith(previous.slice(0, -2)), `request ${i + 1} extends request ${i}`).toBe(true);
    }

    // turn_ended: the turn's sums (turn 1: two calls).
    expect(turn1.turnEnded).toMatchObject({ cacheReadTokens: 5000n, cacheWriteTokens: 5700n, inputTokens: 10n + 5000n + 12n + 700n + 5000n });
    expect(turn2.turnEnded).toMatchObject({ cacheReadTokens: 5700n, cacheWriteTokens: 60n });
    expect(turn3.turnEnded).toMatchObject({ cacheReadTokens: 5760n, cacheWriteTokens: 40n });

    // The admin prompt-cache report, against the same store, once the accounting wrote the four calls' ledger rows.
    await waitFor(async () => (await gw.sql("SELECT 1 FROM ledger")).length === 4, "the four model calls in the ledger");
    const { code, out, err } = await runAdmin(new StoreClient(gw.nc, gw.names, { timeoutMs: 10_000 }), ["cache"]);
    expect(code, err).toBe(0);
    const input = 10 + 5000 + 12 + 700 + 5000 + (9 + 60 + 5700) + (9 + 40 + 5760);
    const read = 5000 + 5700 + 5760;
    const share = `${((Math.floor((read * 10_000) / input)) / 100).toFixed(1)}%`;
    const modelLine = out.split("\n").find((l) => l.startsWith(gw.modelId))?.split(/\s{2,}/);
    expect(modelLine).toEqual([gw.modelId, "4", input.toLocaleString("en-US"), read.toLocaleString("en-US"), (5000 + 700 + 60 + 40).toLocaleString("en-US"), share]);
    const conversationLine = out.split("\n").find((l) => l.startsWith(chat.id))?.split(/\s{2,}/);
    expect(conversationLine?.at(-1)).toBe(share);
  });
});
