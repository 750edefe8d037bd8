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
import { storedHistory } from "@byok/test-support/stored-messages";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { chatStream, enqueueChat } from "./tools-support.ts";

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

  async function connect(options: Partial<Parameters<typeof AcpEditor.start>[0]> = {}): Promise<AcpEditor> {
    const member = await gw.createMember("zed-user");
    const acp = gw.acp!;
    editor = AcpEditor.start({ gatewayUrl: acp.gatewayUrl, key: member.key, caFile: acp.caFile, ...options });
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
    // The editor learns the slash commands after session/new.
    await e.waitForUpdate(sessionId, "available commands", (u) => u.sessionUpdate === "available_commands_update");
  });

  it("runs a tool round on the editor: a read, a write behind an allowed permission, a command, and a plan", async () => {
    const e = await connect();
    await e.initialize();
    const { sessionId } = await e.newSession("/home/dev/project");
    e.files.set("/home/dev/project/notes.txt", "alpha\nbeta\n");
    e.files.set("/home/dev/project/config.ts", "export const mode = 'old';\n");
    enqueueChat(gw, {
      id: "chatcmpl-acp-round-1",
      text: "Let me look.",
      calls: [
        { id: "call_read", name: "read_file", args: { path: "/home/dev/project/notes.txt" } },
        { id: "call_edit", name: "edit_file", args: { path: "/home/dev/project/config.ts", old_string: "'old'", new_string: "'new'" } },
        { id: "call_new", name: "write_file", args: { path: "/home/dev/project/NOTES.md", content: "# Notes\n" } },
        { id: "call_cmd", name: "run_command", args: { command: "echo hello-from-terminal" } },
        { id: "call_plan", name: "todo_write", args: { todos: [{ content: "Read notes", status: "completed" }, { content: "Switch mode", status: "in_progress" }] } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-acp-round-2", text: "Done: mode is new." });

    const response = await e.prompt(sessionId, "Update the config");
    expect(response.stopReason).toBe("end_turn");
    expect(e.agentText(sessionId)).toBe("Let me look.Done: mode is new.");

    // The editor did the work.
    expect(e.reads.map((r) => r.path)).toContain("/home/dev/project/notes.txt");
    expect(e.files.get("/home/dev/project/config.ts")).toBe("export const mode = 'new';\n");
    expect(e.files.get("/home/dev/project/NOTES.md")).toBe("# Notes\n");
    expect(e.writes.map((w) => w.path)).toEqual(["/home/dev/project/config.ts", "/home/dev/project/NOTES.md"]);
    expect(e.terminals).toHaveLength(1);
    expect(e.terminals[0]!.request).toMatchObject({ command: "/bin/sh", args: ["-c", "echo hello-from-terminal"], cwd: "/home/dev/project" });
    // Permission before each write and the command (one at a time, in the model's order), not before the read; edits shown as diffs.
    expect(e.permissions.map((p) => p.request.toolCall.kind)).toEqual(["edit", "edit", "execute"]);
    expect(e.permissions[1]!.request.toolCall.content).toEqual([{ type: "diff", path: "/home/dev/project/NOTES.md", oldText: null, newText: "# Notes\n" }]);
    expect(e.permissions[0]!.request.toolCall.content).toEqual([
      { type: "diff", path: "/home/dev/project/config.ts", oldText: "export const mode = 'old';\n", newText: "export const mode = 'new';\n" },
    ]);
    expect(e.permissions[0]!.request.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"]);

    // What the editor shows: kinds, locations, diff and terminal content, final status.
    const calls = e.toolCalls(sessionId);
    expect(calls.get("call_read")).toMatchObject({ kind: "read", status: "completed", title: "Read /home/dev/project/notes.txt", locations: [{ path: "/home/dev/project/notes.txt" }] });
    expect(calls.get("call_edit")).toMatchObject({ kind: "edit", status: "completed", locations: [{ path: "/home/dev/project/config.ts" }] });
    expect(calls.get("call_edit")?.content?.[0]).toMatchObject({ type: "diff", path: "/home/dev/project/config.ts", newText: "export const mode = 'new';\n" });
    expect(calls.get("call_cmd")).toMatchObject({ kind: "execute", status: "completed", content: [{ type: "terminal", terminalId: e.terminals[0]!.id }] });
    expect(calls.get("call_plan")).toMatchObject({ kind: "think", status: "completed" });
    expect(e.updatesOf(sessionId, "plan").at(-1)?.entries).toEqual([
      { content: "Read notes", status: "completed", priority: "medium" },
      { content: "Switch mode", status: "in_progress", priority: "medium" },
    ]);

    // The model got every result, each once, in the round after its calls.
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    const results = new Map(loop.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, textOf(m.content)]));
    expect([...results.keys()].sort()).toEqual(["call_cmd", "call_edit", "call_new", "call_plan", "call_read"]);
    expect(results.get("call_new")).toBe("Created /home/dev/project/NOTES.md.");
    expect(results.get("call_read")).toBe("alpha\nbeta\n");
    expect(results.get("call_cmd")).toBe("exit code 0\nhello-from-terminal\n");
    expect(results.get("call_edit")).toContain("Wrote /home/dev/project/config.ts");
  });

  it("tells the model about a rejected write, writes nothing, and lets the run go on", async () => {
    const e = await connect({ permission: () => "reject-once" });
    await e.initialize();
    const { sessionId } = await e.newSession("/home/dev/project");
    enqueueChat(gw, { id: "chatcmpl-acp-reject-1", calls: [{ id: "call_w", name: "write_file", args: { path: "/home/dev/project/x.txt", content: "x" } }] });
    enqueueChat(gw, { id: "chatcmpl-acp-reject-2", text: "Understood, I left the file alone." });

    const response = await e.prompt(sessionId, "Write x");
    expect(response.stopReason).toBe("end_turn");
    expect(e.permissions.map((p) => p.answer)).toEqual(["reject-once"]);
    expect(e.writes).toEqual([]);
    expect(e.files.has("/home/dev/project/x.txt")).toBe(false);
    expect(e.toolCalls(sessionId).get("call_w")).toMatchObject({ kind: "edit", status: "failed" });
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(textOf(loop.find((m) => m.role === "tool")?.content)).toContain("The user rejected this change");
    expect(e.agentText(sessionId)).toBe("Understood, I left the file alone.");
  });

  it("remembers Always allow for the rest of the session", async () => {
    const e = await connect({ permission: () => "allow-always" });
    await e.initialize();
    const { sessionId } = await e.newSession("/home/dev/project");
    enqueueChat(gw, { id: "chatcmpl-acp-always-1", calls: [{ id: "call_a1", name: "write_file", args: { path: "/home/dev/project/a.txt", content: "a" } }] });
    enqueueChat(gw, { id: "chatcmpl-acp-always-2", text: "a written." });
    await e.prompt(sessionId, "Write a");
    enqueueChat(gw, { id: "chatcmpl-acp-always-3", calls: [{ id: "call_a2", name: "write_file", args: { path: "/home/dev/project/b.txt", content: "b" } }] });
    enqueueChat(gw, { id: "chatcmpl-acp-always-4", text: "b written." });
    await e.prompt(sessionId, "Write b");
    expect(e.permissions).toHaveLength(1);
    expect(e.files.get("/home/dev/project/b.txt")).toBe("b");
  });

  it("does not offer a tool the editor cannot serve", async () => {
    const e = await connect({ capabilities: { fs: { readTextFile: true, writeTextFile: false }, terminal: false } });
    await e.initialize();
    const { sessionId } = await e.newSession("/home/dev/project");
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    await e.prompt(sessionId, "What can you do?");
    const tools = (gw.llm.requestsTo("openai-chat")[0]!.body as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
    expect(tools.map((t) => t.function.name)).toEqual(["read_file", "todo_write"]);
  });

  it("cancels mid-stream: the prompt ends with stopReason cancelled and nothing is appended after it", async () => {
    const e = await connect();
    await e.initialize();
    const { sessionId } = await e.newSession("/home/dev/project");
    const held = gw.llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: chatStream({ id: "chatcmpl-acp-cancel", text: "This answer is long and will never be finished." }), holdAfterEvents: 3 });
    const prompt = e.prompt(sessionId, "Tell me a long story");
    await held.held;
    await e.waitForUpdate(sessionId, "the first text chunk", (u) => u.sessionUpdate === "agent_message_chunk");
    await e.cancel(sessionId);
    expect((await prompt).stopReason).toBe("cancelled");
    held.release();

    const runs = await gw.sql<{ status: string }>("SELECT status FROM runs WHERE conversation_id = $1", [sessionId]);
    expect(runs.map((r) => r.status)).toEqual(["cancelled"]);
    const messages = await storedHistory(gw, sessionId);
    expect(messages.map((m) => m.body.case)).toEqual(["user", "user"]);
    // The next prompt in the session works and builds on the same history.
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    expect((await e.prompt(sessionId, "Short one, please")).stopReason).toBe("end_turn");
    expect((await storedHistory(gw, sessionId)).map((m) => m.body.case)).toEqual(["user", "user", "user", "assistant"]);
  });
});
