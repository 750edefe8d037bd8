/**
 * The ACP agent of the gateway: what each request does, for the editor
 * connection it came on. The SDK wiring (acp/agent-app.ts) calls these
 * methods; errors are thrown as they are and mapped once there.
 *
 * - initialize: our capabilities (loadSession, session/list, images and
 *   embedded context in prompts; no audio; MCP servers not connected, said in
 *   `_meta` and docs/acp.md) and the one auth method, the member key the
 *   bridge connected with.
 * - session/new, session/load, session/list: sessions are the member's
 *   conversations; their settings live in the session directory, their
 *   history in the store (load replays it as session updates).
 * - session/prompt: one run (turn/), or a slash command handled here.
 * - session/cancel, set_mode, set_config_option, set_model.
 */
import { mintConversationId, mintRunId } from "@byok/contracts";
import type { Logger, ModelConfig } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";
import {
  PROTOCOL_VERSION,
  type AvailableCommand,
  type InitializeRequest,
  type InitializeResponse,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  type SessionUpdate,
  type SetSessionConfigOptionRequest,
  type SetSessionConfigOptionResponse,
  type SetSessionModeRequest,
} from "../acp/acp-types.ts";
import { AcpError } from "../acp/failures.ts";
import { replayUpdates } from "../history/history-replay.ts";
import type { PromptAssets } from "../prompting/prompt-assets.ts";
import { AcpSession } from "../sessions/acp-session.ts";
import type { SessionDirectory, SessionRecord } from "../sessions/session-directory.ts";
import { configOptions, DEFAULT_MODE, isAcpMode, MODE_CONFIG_ID, MODEL_CONFIG_ID, modeState } from "../sessions/session-modes.ts";
import { conversationHead, prepareTurn } from "../turn/prepare-turn.ts";
import { titleOf } from "../turn/prompt-message.ts";
import { PromptTurn, type TurnDeps } from "../turn/prompt-turn.ts";
import type { EditorConnection } from "./editor-connection.ts";

export const AUTH_METHOD_ID = "byok-member-key";

/** Sessions per session/list page. */
const LIST_PAGE = 50;

export const MCP_NOTE =
  "MCP servers passed in session/new or session/load are not connected: the model runs on the team gateway, which cannot reach servers on the member's machine. File and terminal tools are served by the editor through ACP instead.";

export interface AgentDeps {
  readonly store: Pick<StoreClient, "call" | "revisionMessages" | "findRun">;
  readonly directory: SessionDirectory;
  readonly prompts: PromptAssets;
  readonly models: readonly ModelConfig[];
  readonly defaultModelId: string;
  readonly turn: Omit<TurnDeps, "findRun" | "log">;
  readonly version: string;
  readonly log: Logger;
}

export class AcpAgent {
  readonly #deps: AgentDeps;
  readonly #sessions = new Map<string, AcpSession>();

  constructor(deps: AgentDeps) {
    this.#deps = deps;
  }

  initialize(conn: EditorConnection, params: InitializeRequest): InitializeResponse {
    conn.initialized(params.clientCapabilities ?? {}, params.clientInfo);
    this.#deps.log.info({ link_id: conn.linkId, editor: conn.editorName, protocol_version: params.protocolVersion, capabilities: params.clientCapabilities }, "editor initialized");
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: this.#deps.models.some((m) => m.supportsImages), audio: false, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { list: {} },
      },
      authMethods: [
        { id: AUTH_METHOD_ID, name: "Team gateway member key", description: "The bridge signs in with the member key it was started with (--key or BYOK_MEMBER_KEY)." },
      ],
      agentInfo: { name: "byok-gateway", title: "Team BYOK gateway", version: this.#deps.version },
      _meta: { "byok/mcp": MCP_NOTE },
    };
  }

  /** The link is authenticated by its member key already; this confirms the one method. */
  authenticate(methodId: string): Record<string, never> {
    if (methodId !== AUTH_METHOD_ID) throw new AcpError({ kind: "invalid_params", message: `unknown auth method ${JSON.stringify(methodId)}; use ${AUTH_METHOD_ID}` });
    return {};
  }

  async newSession(conn: EditorConnection, params: NewSessionRequest): Promise<NewSessionResponse> {
    requireAbsolute(params.cwd);
    const now = new Date().toISOString();
    const record: SessionRecord = {
      v: 1,
      sessionId: mintConversationId(),
      memberId: conn.memberId,
      cwd: params.cwd,
      additionalDirectories: params.additionalDirectories ?? [],
      mode: DEFAULT_MODE,
      modelId: this.#deps.defaultModelId,
      allowAlways: [],
      createdAt: now,
      updatedAt: now,
    };
    await this.#deps.directory.put(record);
    const session = this.#adopt(record, conn);
    this.#noteMcp(session, params.mcpServers.length);
    this.#afterResponse(session, [this.#commandsUpdate()]);
    this.#deps.log.info({ conversation_id: session.sessionId, link_id: conn.linkId }, "session created");
    return { sessionId: session.sessionId, modes: modeState(record.mode), configOptions: this.#options(session) };
  }

  async loadSession(conn: EditorConnection, params: LoadSessionRequest): Promise<LoadSessionResponse> {
    requireAbsolute(params.cwd);
    const session = await this.#session(conn, params.sessionId);
    const directories = params.additionalDirectories ?? session.record.additionalDirectories;
    if (params.cwd !== session.cwd || JSON.stringify(directories) !== JSON.stringify(session.record.additionalDirectories)) {
      await session.update({ cwd: params.cwd, additionalDirectories: directories });
    }
    this.#noteMcp(session, params.mcpServers.length);
    const head = await conversationHead(this.#deps.store, session.sessionId, conn.memberId);
    const history = head === "" ? [] : await this.#deps.store.revisionMessages(head);
    for (const update of replayUpdates(history)) await conn.editor.update(session.sessionId, update);
    this.#afterResponse(session, [this.#commandsUpdate()]);
    this.#deps.log.info({ conversation_id: session.sessionId, link_id: conn.linkId, messages: history.length }, "session loaded");
    return { modes: modeState(session.record.mode), configOptions: this.#options(session) };
  }

  async listSessions(conn: EditorConnection, params: ListSessionsRequest): Promise<ListSessionsResponse> {
    const cwd = params.cwd ?? undefined;
    const records = (await this.#deps.directory.list(conn.memberId))
      .filter((r) => cwd === undefined || r.cwd === cwd)
      .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.sessionId.localeCompare(b.sessionId)));
    const start = params.cursor === undefined || params.cursor === null ? 0 : cursorOffset(params.cursor);
    const page = records.slice(start, start + LIST_PAGE);
    const next = start + LIST_PAGE < records.length ? Buffer.from(String(start + LIST_PAGE)).toString("base64url") : null;
    return {
      sessions: page.map((r) => ({ sessionId: r.sessionId, cwd: r.cwd, additionalDirectories: r.additionalDirectories, title: r.title ?? null, updatedAt: r.updatedAt })),
      nextCursor: next,
    };
  }

  async prompt(conn: EditorConnection, params: PromptRequest, signal: AbortSignal): Promise<PromptResponse> {
    const session = await this.#session(conn, params.sessionId);
    const previous = session.turn;
    if (previous !== undefined) {
      // One prompt at a time per session: a new one replaces the running one.
      previous.cancel("a newer prompt replaced it");
      await previous.done;
    }
    const command = slashCommand(params.prompt);
    if (command !== undefined) return this.#runCommand(session, command);

    const model = this.#model(session);
    if (!model.supportsImages && params.prompt.some((b) => b.type === "image" || (b.type === "resource" && "blob" in b.resource && (b.resource.mimeType ?? "").startsWith("image/")))) {
      throw new AcpError({ kind: "invalid_params", message: `${model.displayName} does not take images; pick another model or send text` });
    }
    const runId = mintRunId();
    const log = this.#deps.log.child({ conversation_id: session.sessionId });
    const prepared = await prepareTurn({
      runId,
      conversationId: session.sessionId,
      memberId: conn.memberId,
      prompt: params.prompt,
      mode: session.record.mode,
      model,
      environment: { cwd: session.cwd, additionalDirectories: session.record.additionalDirectories, editor: conn.editorName },
      capabilities: conn.capabilities,
      knownContextDigest: session.contextDigest,
      prompts: this.#deps.prompts,
      store: this.#deps.store,
      log,
    });
    const turn = new PromptTurn({ ...this.#deps.turn, findRun: (id) => this.#deps.store.findRun(id), log }, session, {
      run: prepared.run,
      toolNames: prepared.toolNames,
      contextWindow: model.contextWindow,
    });
    session.turn = turn;
    this.#deps.turn.metrics.promptStarted();
    const onAbort = () => turn.cancel("the editor cancelled the request");
    signal.addEventListener("abort", onAbort, { once: true });
    if (session.record.title === undefined) {
      const title = titleOf(params.prompt);
      if (title !== undefined) {
        await session.update({ title });
        this.#send(session, { sessionUpdate: "session_info_update", title, updatedAt: session.record.updatedAt });
      }
    }
    let end;
    try {
      end = await turn.start();
    } finally {
      signal.removeEventListener("abort", onAbort);
      if (session.turn === turn) session.turn = undefined;
    }
    this.#deps.turn.metrics.promptEnded(end.kind === "stop" ? end.stopReason : end.failure.kind);
    // A run that began appended the context; after a cancel or failure it may not have: read it back next time.
    session.contextDigest = end.kind === "stop" && end.stopReason !== "cancelled" ? prepared.contextDigest : undefined;
    void session.update({});
    if (end.kind === "failed") throw new AcpError(end.failure);
    return { stopReason: end.stopReason };
  }

  cancel(conn: EditorConnection, sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    if (session === undefined || session.memberId !== conn.memberId) return;
    session.turn?.cancel("cancelled by the user");
  }

  async setMode(conn: EditorConnection, params: SetSessionModeRequest): Promise<Record<string, never>> {
    const session = await this.#session(conn, params.sessionId);
    await this.#setMode(session, params.modeId);
    return {};
  }

  async setConfigOption(conn: EditorConnection, params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse> {
    const session = await this.#session(conn, params.sessionId);
    if (typeof params.value !== "string") throw new AcpError({ kind: "invalid_params", message: `${params.configId} takes a value id` });
    switch (params.configId) {
      case MODE_CONFIG_ID:
        await this.#setMode(session, params.value);
        break;
      case MODEL_CONFIG_ID:
        await this.#setModel(session, params.value);
        break;
      default:
        throw new AcpError({ kind: "invalid_params", message: `unknown config option ${JSON.stringify(params.configId)}` });
    }
    return { configOptions: this.#options(session) };
  }

  /** session/set_model, the older (unstable) way editors pick a model. */
  async setModel(conn: EditorConnection, sessionId: string, modelId: string): Promise<Record<string, never>> {
    await this.#setModel(await this.#session(conn, sessionId), modelId);
    return {};
  }

  /** The editor's link ended: its sessions' running prompts are cancelled. */
  connectionClosed(conn: EditorConnection): void {
    conn.close();
    for (const session of this.#sessions.values()) {
      if (session.connection === conn) session.turn?.cancel("the editor went away");
    }
  }

  async #setMode(session: AcpSession, modeId: string): Promise<void> {
    if (!isAcpMode(modeId)) throw new AcpError({ kind: "invalid_params", message: `unknown mode ${JSON.stringify(modeId)}; one of ask, agent, plan` });
    await session.update({ mode: modeId });
    this.#send(session, { sessionUpdate: "current_mode_update", currentModeId: modeId });
    this.#send(session, { sessionUpdate: "config_option_update", configOptions: this.#options(session) });
  }

  async #setModel(session: AcpSession, modelId: string): Promise<void> {
    if (!this.#deps.models.some((m) => m.id === modelId)) {
      throw new AcpError({ kind: "invalid_params", message: `model ${JSON.stringify(modelId)} is not one of the team's models: ${this.#deps.models.map((m) => m.id).join(", ")}` });
    }
    await session.update({ modelId });
    this.#send(session, { sessionUpdate: "config_option_update", configOptions: this.#options(session) });
  }

  async #runCommand(session: AcpSession, command: SlashCommand): Promise<PromptResponse> {
    try {
      if (command.name === "mode") await this.#setMode(session, command.input);
      else await this.#setModel(session, command.input);
    } catch (error) {
      if (!(error instanceof AcpError)) throw error;
      this.#send(session, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: error.message } });
      return { stopReason: "end_turn" };
    }
    const text = command.name === "mode" ? `Mode: ${session.record.mode}.` : `Model: ${this.#model(session).displayName}.`;
    this.#send(session, { sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
    return { stopReason: "end_turn" };
  }

  /** The member's session: held here, or found again in the directory (another process or connection made it). */
  async #session(conn: EditorConnection, sessionId: string): Promise<AcpSession> {
    const held = this.#sessions.get(sessionId);
    if (held !== undefined) {
      if (held.memberId !== conn.memberId) throw new AcpError({ kind: "session_not_found", sessionId });
      held.attach(conn);
      return held;
    }
    const record = await this.#deps.directory.get(conn.memberId, sessionId);
    if (record === undefined) throw new AcpError({ kind: "session_not_found", sessionId });
    return this.#adopt(record, conn);
  }

  #adopt(record: SessionRecord, conn: EditorConnection): AcpSession {
    const session = new AcpSession(record, conn, (r) => this.#deps.directory.put(r), this.#deps.log);
    this.#sessions.set(session.sessionId, session);
    return session;
  }

  #model(session: AcpSession): ModelConfig {
    const { models, defaultModelId } = this.#deps;
    const chosen = models.find((m) => m.id === session.record.modelId);
    if (chosen !== undefined) return chosen;
    // The model was removed from the gateway file since the session picked it.
    return models.find((m) => m.id === defaultModelId) ?? (models[0] as ModelConfig);
  }

  #options(session: AcpSession) {
    return configOptions(session.record.mode, this.#model(session).id, this.#deps.models);
  }

  #commandsUpdate(): SessionUpdate {
    const commands: AvailableCommand[] = [
      { name: "mode", description: "Switch the session's mode: ask (read only), agent (edits and commands) or plan", input: { hint: "ask | agent | plan" } },
      { name: "model", description: "Switch to another of the team's models", input: { hint: this.#deps.models.map((m) => m.id).join(" | ") } },
    ];
    return { sessionUpdate: "available_commands_update", availableCommands: commands };
  }

  #noteMcp(session: AcpSession, servers: number): void {
    if (servers > 0) this.#deps.log.info({ conversation_id: session.sessionId, mcp_servers: servers }, "MCP servers from the editor are not connected");
  }

  /** Updates that must follow the response (the editor knows the session only once it has the answer). */
  #afterResponse(session: AcpSession, updates: SessionUpdate[]): void {
    setImmediate(() => {
      for (const update of updates) this.#send(session, update);
    });
  }

  #send(session: AcpSession, update: SessionUpdate): void {
    session.editor.update(session.sessionId, update).catch((error: unknown) => this.#deps.log.debug({ err: error }, "session update not sent"));
  }
}

interface SlashCommand {
  readonly name: "mode" | "model";
  readonly input: string;
}

/** `/mode <id>` or `/model <id>` as the whole prompt; anything else goes to the model. */
function slashCommand(prompt: PromptRequest["prompt"]): SlashCommand | undefined {
  if (prompt.length !== 1 || prompt[0]?.type !== "text") return undefined;
  const match = /^\/(mode|model)(?:\s+(\S+))?\s*$/.exec(prompt[0].text.trim());
  if (match === null) return undefined;
  return { name: match[1] as "mode" | "model", input: match[2] ?? "" };
}

function requireAbsolute(cwd: string): void {
  if (!cwd.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(cwd)) throw new AcpError({ kind: "invalid_params", message: `cwd must be an absolute path, got ${JSON.stringify(cwd)}` });
}

function cursorOffset(cursor: string): number {
  const n = Number(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!Number.isSafeInteger(n) || n < 0) throw new AcpError({ kind: "invalid_params", message: "unknown session list cursor" });
  return n;
}

