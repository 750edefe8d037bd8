/**
 * The real client path: the fake Cursor client talks to https://api2.cursor.sh
 * through the edge proxy (HTTP CONNECT, member key, TLS terminated with the
 * team CA), which routes the BYOK run to the cursor adapter.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const expected = readChatFixture(TEXT_FIXTURE);

describe("spine through the edge proxy", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway({ edgeProxy: true });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("a member's text turn over CONNECT + team CA completes, and the conversation belongs to that member", async () => {
    const edge = gw.edge!;
    const alice = await edge.createMember("alice");
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const chat = edge.client({ name: "alice", key: alice.key }).conversation();
    const result = await chat.send("hello through the proxy", { modelId: gw.modelId, kv: { ackDelayMs: () => 20 } }).finished;

    expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toBe(expected.text);
    expect(result.turnEnded?.outputTokens).toBe(BigInt(expected.usage!.outputTokens));

    const conversation = await gw.store("getConversation", { conversationId: chat.id });
    expect(conversation.error).toBeUndefined();
    expect(conversation.memberId).toBe(alice.memberId);
  });

  it("a wrong gateway key never reaches the adapter: the CONNECT is refused with 407", async () => {
    const chat = gw.edge!.client({ name: "mallory", key: "not-a-gateway-key" }).conversation();
    const result = await chat.send("let me in", { modelId: gw.modelId }).finished;
    expect(result.end.kind).toBe("broken");
    expect(result.end.kind === "broken" ? result.end.reason : "").toMatch(/407/);
    expect(gw.llm.requests).toHaveLength(0);
  });
});
