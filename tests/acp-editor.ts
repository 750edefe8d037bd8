/**
 * An ACP editor for the end-to-end tests: the SDK's client-side connection
 * (`client().connect(...)`, what replaced ClientSideConnection in SDK 2.x),
 * speaking ndjson over the stdio of the member-side command it spawns
 * (`node packages/acp-bridge/src/main.ts acp --gateway ... --key ... --ca ...`),
 * exactly as Zed or a JetBrains IDE does. It plays the editor's side:
 * buffers of files (fs/read_text_file, fs/write_text_file), real terminals
 * (`/bin/sh -c` in a temp dir), permission answers by a policy the test
 * sets, and a log of every session update.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { exec } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Readable, Writable } from "node:stream";
import type { Readable as NodeReadable, Writable as NodeWritable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { waitFor } from "@byok/test-support/infra";

const BRIDGE_MAIN = fileURLToPath(new URL("../packages/acp-bridge/src/main.ts", import.meta.url));

export type PermissionAnswer = "allow-once" | "allow-always" | "reject-once" | "cancelled";

export interface PermissionAsked {
  readonly request: acp.RequestPermissionRequest;
  readonly answer: PermissionAnswer;
}

export interface TerminalRecord {
  readonly id: string;
  readonly request: acp.CreateTerminalRequest;
  output: string;
  exitCode: number | null;
  released: boolean;
  killed: boolean;
  readonly exited: Promise<void>;
}

export interface EditorOptions {
  readonly gatewayUrl: string;
  readonly key: string;
  readonly caFile: string;
  /** What the editor declares in initialize (default: fs read+write and terminal). */
  readonly capabilities?: acp.ClientCapabilities;
  /** How permission requests are answered (default: allow once). */
  permission?: (request: acp.RequestPermissionRequest) => PermissionAnswer | Promise<PermissionAnswer>;
  /** The directory terminals run in. */
  readonly terminalDir?: string;
}

export class AcpEditor {
  readonly files = new Map<string, string>();
  readonly writes: acp.WriteTextFileRequest[] = [];
  readonly reads: acp.ReadTextFileRequest[] = [];
  readonly permissions: PermissionAsked[] = [];
  readonly terminals: TerminalRecord[] = [];
  readonly updates: acp.SessionNotification[] = [];
  readonly stderr: string[] = [];
  readonly connection: acp.ClientConnection;
  readonly child: ChildProcessByStdio<NodeWritable, NodeReadable, NodeReadable>;
  readonly #options: EditorOptions;
  #exited: Promise<number | null>;

  private constructor(options: EditorOptions) {
    this.#options = options;
    this.child = spawn(process.execPath, [BRIDGE_MAIN, "acp", "--gateway", options.gatewayUrl, "--key", options.key, "--ca", options.caFile], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (chunk: string) => this.stderr.push(chunk));
    this.#exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    const app = acp
      .client({ name: "test-editor" })
      .onNotification(acp.methods.client.session.update, ({ params }) => void this.updates.push(params))
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        const answer = await (this.#options.permission ?? (() => "allow-once" as const))(params);
        this.permissions.push({ request: params, answer });
        return answer === "cancelled" ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId: answer } };
      })
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        this.reads.push(params);
        const text = this.files.get(params.path);
        if (text === undefined) throw acp.RequestError.resourceNotFound(params.path);
        if (params.line === undefined || params.line === null) return { content: text };
        const lines = text.split("\n").slice(params.line - 1, params.limit === undefined || params.limit === null ? undefined : params.line - 1 + params.limit);
        return { content: lines.join("\n") };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        this.writes.push(params);
        this.files.set(params.path, params.content);
        return {};
      })
      .onRequest(acp.methods.client.terminal.create, ({ params }) => this.#createTerminal(params))
      .onRequest(acp.methods.client.terminal.output, ({ params }) => {
        const t = this.#terminal(params.terminalId);
        return { output: t.output, truncated: false, exitStatus: t.exitCode === null && !t.killed ? null : { exitCode: t.exitCode, signal: t.killed ? "SIGKILL" : null } };
      })
      .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
        const t = this.#terminal(params.terminalId);
        await t.exited;
        return { exitCode: t.exitCode, signal: t.killed ? "SIGKILL" : null };
      })
      .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
        this.#terminal(params.terminalId).killed = true;
        return {};
      })
      .onRequest(acp.methods.client.terminal.release, ({ params }) => {
        this.#terminal(params.terminalId).released = true;
        return {};
      });
    this.connection = app.connect(acp.ndJsonStream(Writable.toWeb(this.child.stdin), Readable.toWeb(this.child.stdout) as ReadableStream<Uint8Array>));
  }

  /** Spawns the bridge and connects the editor to it (no initialize yet). */
  static start(options: EditorOptions): AcpEditor {
    return new AcpEditor(options);
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  initialize(): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: this.#options.capabilities ?? { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      clientInfo: { name: "test-editor", title: "Test Editor", version: "1.0.0" },
    });
  }

  async newSession(cwd: string): Promise<acp.NewSessionResponse> {
    return this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  cancel(sessionId: string): Promise<void> {
    return this.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  }

  set permission(policy: NonNullable<EditorOptions["permission"]>) {
    this.#options.permission = policy;
  }

  /** Updates of one session (optionally of one kind), in arrival order. */
  updatesOf<K extends acp.SessionUpdate["sessionUpdate"]>(sessionId: string, kind?: K): Array<Extract<acp.SessionUpdate, { sessionUpdate: K }>> {
    return this.updates
      .filter((n) => n.sessionId === sessionId && (kind === undefined || n.update.sessionUpdate === kind))
      .map((n) => n.update as Extract<acp.SessionUpdate, { sessionUpdate: K }>);
  }

  /** The agent's streamed text of a session (agent_message_chunk), joined. */
  agentText(sessionId: string, from = 0): string {
    return this.updates
      .slice(from)
      .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === "agent_message_chunk")
      .map((n) => {
        const u = n.update as Extract<acp.SessionUpdate, { sessionUpdate: "agent_message_chunk" }>;
        return u.content.type === "text" ? u.content.text : "";
      })
      .join("");
  }

  /** The latest state of each tool call: its tool_call merged with every tool_call_update after it. */
  toolCalls(sessionId: string): Map<string, acp.ToolCall> {
    const calls = new Map<string, acp.ToolCall>();
    for (const update of this.updatesOf(sessionId)) {
      if (update.sessionUpdate === "tool_call") {
        const { sessionUpdate: _kind, ...call } = update;
        calls.set(call.toolCallId, { ...calls.get(call.toolCallId), ...call });
      } else if (update.sessionUpdate === "tool_call_update") {
        const { sessionUpdate: _kind, ...change } = update;
        const known = calls.get(change.toolCallId) ?? { toolCallId: change.toolCallId, title: "" };
        const defined = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined && v !== null));
        calls.set(change.toolCallId, { ...known, ...defined } as acp.ToolCall);
      }
    }
    return calls;
  }

  waitForUpdate(sessionId: string, what: string, test: (update: acp.SessionUpdate) => boolean, timeoutMs = 10_000): Promise<acp.SessionUpdate> {
    return waitFor(() => this.updatesOf(sessionId).find(test), what, timeoutMs);
  }

  /** Closes stdin (what an editor does when it stops the agent) and waits for the bridge to exit. */
  async close(): Promise<void> {
    this.connection.close();
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 3_000);
    await this.#exited;
    clearTimeout(timer);
  }

  /** The member-side process dies (SIGKILL): no clean close reaches the gateway. */
  async kill(): Promise<void> {
    this.connection.close();
    this.child.kill("SIGKILL");
    await this.#exited;
  }

  #createTerminal(params: acp.CreateTerminalRequest): acp.CreateTerminalResponse {
    const id = `term-${this.terminals.length + 1}`;
    let done: () => void = () => undefined;
    const exited = new Promise<void>((resolve) => (done = resolve));
    const record: TerminalRecord = { id, request: params, output: "", exitCode: null, released: false, killed: false, exited };
    this.terminals.push(record);
    const line = params.command === "/bin/sh" && params.args?.[0] === "-c" ? (params.args[1] ?? "") : [params.command, ...(params.args ?? [])].join(" ");
    exec(line, { cwd: this.#options.terminalDir ?? process.cwd(), shell: "/bin/sh" }, (error, stdout, stderr) => {
      record.output = `${stdout}${stderr}`;
      record.exitCode = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      done();
    });
    return { terminalId: id };
  }

  #terminal(id: string): TerminalRecord {
    const t = this.terminals.find((x) => x.id === id);
    if (t === undefined) throw acp.RequestError.resourceNotFound(id);
    return t;
  }
}
