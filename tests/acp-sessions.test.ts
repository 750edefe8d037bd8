/**
 * End to end over ACP, the session side: a session outlives the member-side
 * process (list and load from a new bridge, history replayed as session
 * updates, the next prompt on the same conversation), mode and model
 * switches reach the run (system prompt, tools, upstream model), and a bad
 * member key is a JSON-RPC error the editor can show.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { providerFixture } from "@byok/test-support/fixtures";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { AcpEditor } from "./acp-editor.ts";
import { chatMessages, textOf } from "@byok/test-support/chat-requests";
import { enqueueChat } from "./tools-support.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const SECOND_MODEL = { id: "byok-test-second", displayName: "Second team model", upstreamModel: "gpt-4o-mini", contextWindow: 64_000 };

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content?: unknown }>;
  tools?: Array<{ function: { name: string } }>;
}

describe("ACP sessions", () => {
  let gw: GatewayHarness;
  const editors: AcpEditor[] = [];
  beforeEach(async () => {
    gw = await startGateway({ acpAdapter: true, extraModels: [SECOND_MODEL] });
  });
  afterEach(async () => {
    for (const e of editors.splice(0)) await e.close();
    await gw.stop();
  });

  function start(key: string): AcpEditor {
    const editor = AcpEditor.start({ gatewayUrl: gw.acp!.gatewayUrl, key, caFile: gw.acp!.caFile });
    editors.push(editor);
    return editor;
  }

  it("lists and loads a session from a new member-side process, replaying its history, and goes on with it", async () => {
    const { key } = await gw.createMember("jetbrains-user");
    const first = start(key);
    await first.initialize();
    const { sessionId } = await first.newSession("/home/dev/project");
    first.files.set("/home/dev/project/README.md", "# Project\n");
    enqueueChat(gw, { id: "chatcmpl-acp-load-1", text: "Reading.", calls: [{ id: "call_readme", name: "read_file", args: { path: "/home/dev/project/README.md" } }] });
    enqueueChat(gw, { id: "chatcmpl-acp-load-2", text: "It is a project." });
    expect((await first.prompt(sessionId, "What is this repo?")).stopReason).toBe("end_turn");
    // The member-side process dies (the editor restarts it).
    await first.kill();

    const second = start(key);
    const init = await second.initialize();
    expect(init.agentCapabilities?.loadSession).toBe(true);
    const listed = await second.agent.request("session/list", {});
    expect(listed.sessions).toEqual([expect.objectContaining({ sessionId, cwd: "/home/dev/project", title: "What is this repo?" })]);

    const loaded = await second.agent.request("session/load", { sessionId, cwd: "/home/dev/project", mcpServers: [] });
    expect(loaded?.modes?.currentModeId).toBe("agent");
    // The replay arrives before the load's answer; the slash commands after it.
    const replayed = second.updatesOf(sessionId).map((u) => u.sessionUpdate);
    expect(replayed.slice(0, 5)).toEqual(["user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]);
    await second.waitForUpdate(sessionId, "available commands", (u) => u.sessionUpdate === "available_commands_update");
    expect(second.updatesOf(sessionId, "user_message_chunk").map((u) => (u.content.type === "text" ? u.content.text : ""))).toEqual(["What is this repo?"]);
    expect(second.agentText(sessionId)).toBe("Reading.It is a project.");
    expect(second.toolCalls(sessionId).get("call_readme")).toMatchObject({ kind: "read", status: "completed", title: "Read /home/dev/project/README.md" });

    // The next prompt continues the same conversation: the model sees the earlier turn.
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    expect((await second.prompt(sessionId, "And now?")).stopReason).toBe("end_turn");
    const messages = (gw.llm.requestsTo("openai-chat")[2]!.body as ChatBody).messages;
    const userTexts = messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    expect(userTexts.filter((t) => !t.startsWith("<environment>"))).toEqual(["What is this repo?", "And now?"]);
    // The environment context went to the model once, not once per turn.
    expect(userTexts.filter((t) => t.startsWith("<environment>"))).toHaveLength(1);
    expect(second.agentText(sessionId)).toBe(`Reading.It is a project.${readChatFixture(TEXT_FIXTURE).text}`);
  });

  it("switches mode and model: the next run gets the mode's prompt and tools and the chosen upstream model", async () => {
    const { key } = await gw.createMember("mode-user");
    const e = start(key);
    await e.initialize();
    const created = await e.newSession("/home/dev/project");
    const { sessionId } = created;
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(["ask", "agent", "plan"]);
    const modelOption = created.configOptions?.find((o) => o.id === "model");
    expect(modelOption?.type === "select" && modelOption.options).toEqual([
      expect.objectContaining({ value: gw.modelId }),
      expect.objectContaining({ value: SECOND_MODEL.id, name: SECOND_MODEL.displayName }),
    ]);

    await e.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    await e.waitForUpdate(sessionId, "the mode update", (u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "ask");
    const set = await e.agent.request("session/set_config_option", { sessionId, configId: "model", value: SECOND_MODEL.id });
    expect(set.configOptions.find((o) => o.id === "model")?.currentValue).toBe(SECOND_MODEL.id);
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    await e.prompt(sessionId, "Explain the code");
    const asked = gw.llm.requestsTo("openai-chat")[0]!.body as ChatBody;
    expect(asked.model).toBe(SECOND_MODEL.upstreamModel);
    expect((asked.tools ?? []).map((t) => t.function.name)).toEqual(["read_file"]);
    expect(textOf(asked.messages[0]?.content)).toContain("Ask mode");

    // Back to agent mode on the first model, with the slash command and the older set_model.
    expect((await e.prompt(sessionId, "/mode agent")).stopReason).toBe("end_turn");
    await e.agent.request("session/set_model", { sessionId, modelId: gw.modelId });
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    await e.prompt(sessionId, "Now fix it");
    const fixing = gw.llm.requestsTo("openai-chat")[1]!.body as ChatBody;
    expect(fixing.model).toBe("gpt-4o");
    expect((fixing.tools ?? []).map((t) => t.function.name)).toEqual(["read_file", "write_file", "edit_file", "run_command", "todo_write"]);
    // An unknown mode is the editor's error to show.
    await expect(e.agent.request("session/set_mode", { sessionId, modeId: "yolo" })).rejects.toMatchObject({ code: -32602 });
    expect(chatMessages(gw.llm.requestsTo("openai-chat")[1]).length).toBeGreaterThan(2);
  });

  it("answers a bad member key with a JSON-RPC error the editor can show", async () => {
    const e = start("not-a-member-key");
    const error = await e.initialize().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ code: -32000, message: expect.stringContaining("refused the member key") });
    expect((error as Error).message).toContain("unknown or revoked member key");
    // Every later request gets the same answer; the bridge stays up for the editor to show it.
    await expect(e.newSession("/home/dev/project")).rejects.toMatchObject({ code: -32000 });
    expect(e.child.exitCode).toBeNull();
  });
});
