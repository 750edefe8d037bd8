/**
 * End to end over ACP: the SDK's client-side connection as the editor, the
 * member-side command (byok-acp) spawned over stdio, TLS with the team CA to
 * the real gateway services (ACP adapter, run worker, provider gateway, store)
 * and the mock LLM.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { providerFixture } from "@byok/test-support/fixtures";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { AcpEditor } from "./acp-editor.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");

describe("ACP turns", () => {
  let gw: GatewayHarness;
  let editor: AcpEditor | undefined;
  beforeEach(async () => {
    gw = await startGateway({ acpAdapter: true });
  });
  afterEach(async () => {
    await editor?.close();
    await gw.stop();
  });

  async function connect(): Promise<AcpEditor> {
    const member = await gw.createMember("zed-user");
    const acp = gw.acp!;
    editor = AcpEditor.start({ gatewayUrl: acp.gatewayUrl, key: member.key, caFile: acp.caFile });
    return editor;
  }

  it("streams a text turn as agent_message_chunk updates and ends it with end_turn", async () => {
    const e = await connect();
    const init = await e.initialize();
    expect(init.agentCapabilities).toMatchObject({ loadSession: true, promptCapabilities: { embeddedContext: true, audio: false }, sessionCapabilities: { list: {} } });
    const { sessionId } = await e.newSession("/home/dev/project");
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const response = await e.prompt(sessionId, "Say hello");
    expect(response.stopReason).toBe("end_turn");
    const chunks = e.updatesOf(sessionId, "agent_message_chunk");
    expect(chunks.length).toBeGreaterThan(1);
    expect(e.agentText(sessionId)).toBe(readChatFixture(TEXT_FIXTURE).text);
  });
});
