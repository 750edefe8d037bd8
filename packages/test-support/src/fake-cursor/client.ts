/**
 * The fake Cursor IDE: one transport (direct or through the edge proxy), one
 * blob store shared by all runs, and conversations that carry the checkpoint
 * from one turn to the next.
 *
 *   const client = new FakeCursorClient({ transport: { baseUrl: adapter.url } });
 *   const chat = client.conversation();
 *   const turn1 = await chat.send("hello", { modelId: "byok-gpt4o" }).finished;
 *   const turn2 = await chat.send("and again", { modelId: "byok-gpt4o" }).finished; // from turn 1's settled checkpoint
 *   client.close();
 */
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { BlobStore } from "./blob-store.ts";
import {
  buildRunRequest,
  emptyConversationState,
  type ConversationState,
  type ModelSelection,
  type RunRequestEnv,
  type RunRequestInput,
  type SubagentRequest,
  type TurnAction,
} from "./run-request.ts";
import { BIDI_APPEND_PATH, CursorRun, type RunOptions } from "./run.ts";
import { HttpTransport, type TransportOptions, type UnaryResponse } from "./transport.ts";
import type { ExecHandlers, QueryHandler } from "./exec.ts";

export interface FakeCursorOptions {
  transport: TransportOptions;
  /** Headers on every request (defaults imitate the IDE; an `authorization` is always sent). */
  headers?: Readonly<Record<string, string>>;
  /** Shared blob store (default: a new one). */
  blobs?: BlobStore;
}

const IDE_HEADERS: Readonly<Record<string, string>> = {
  authorization: "Bearer fake-cursor-access-token",
  "connect-protocol-version": "1",
  "user-agent": "connect-es/1.6.1",
  "x-cursor-client-version": "3.16.17",
  "x-cursor-client-type": "ide",
  "x-cursor-checksum": "fake-checksum",
  "x-ghost-mode": "true",
  "x-cursor-timezone": "Europe/Berlin",
};

/** Per-turn options that the conversation passes to the run. */
export interface TurnOptions {
  modelId?: string;
  /** Overrides modelId: how the model is named ({via:"none"} for bad-input tests). */
  model?: ModelSelection;
  messageId?: string;
  env?: Partial<RunRequestEnv>;
  requestId?: string;
  heartbeatMs?: number;
  kv?: RunOptions["kv"];
  onExec?: ExecHandlers;
  onQuery?: QueryHandler;
  start?: RunOptions["start"];
  gzipFirstAppend?: boolean;
  headers?: Readonly<Record<string, string>>;
  /** The turn's mode (default: the mode of the conversation's last checkpoint, else agent), as the IDE's mode picker does. */
  mode?: agent.AgentMode;
  /** Set on a sub-agent's run (see subagents.ts). */
  subagent?: SubagentRequest;
  /** RequestContext extras (web toggles, custom sub-agents). */
  context?: RunRequestInput["context"];
}

export class FakeCursorClient {
  readonly transport: HttpTransport;
  readonly blobs: BlobStore;
  readonly headers: Readonly<Record<string, string>>;
  private readonly runs = new Set<CursorRun>();

  constructor(options: FakeCursorOptions) {
    this.transport = new HttpTransport(options.transport);
    this.blobs = options.blobs ?? new BlobStore();
    this.headers = { ...IDE_HEADERS, ...options.headers };
  }

  conversation(id: string = randomUUID()): FakeConversation {
    return new FakeConversation(this, id);
  }

  /** Start a run with a hand-built run_request (see buildRunRequest). */
  startRun(options: RunOptions): CursorRun {
    const run = new CursorRun({ transport: this.transport, blobs: this.blobs, baseHeaders: this.headers }, options);
    this.runs.add(run);
    void run.finished.finally(() => this.runs.delete(run));
    return run;
  }

  /**
   * One raw BidiAppend (for bad-input tests): `data` goes into the request as
   * given (not hex-encoded here). Returns the HTTP answer as is.
   */
  bidiAppendRaw(input: { requestId: string; seqno: number; data: string; gzip?: boolean; body?: Uint8Array }): Promise<UnaryResponse> {
    let body =
      input.body ??
      toBinary(
        aiserver.BidiAppendRequestSchema,
        create(aiserver.BidiAppendRequestSchema, { data: input.data, requestId: { requestId: input.requestId }, appendSeqno: BigInt(input.seqno) }),
      );
    const headers: Record<string, string> = { ...this.headers, "content-type": "application/proto", "x-request-id": input.requestId };
    if (input.gzip === true) {
      body = gzipSync(body);
      headers["content-encoding"] = "gzip";
    }
    return this.transport.unary(BIDI_APPEND_PATH, headers, body);
  }

  /** Any unary Connect call with a protobuf body (model list, server config). */
  unary(path: string, body: Uint8Array): Promise<UnaryResponse> {
    return this.transport.unary(path, { ...this.headers, "content-type": "application/proto" }, body);
  }

  /** Waits for open runs, then closes the HTTP agent. */
  async close(): Promise<void> {
    for (const run of [...this.runs]) run.disconnect();
    await Promise.allSettled([...this.runs].map((r) => r.finished));
    this.transport.close();
  }
}

/**
 * One chat in the IDE: each turn sends the last settled checkpoint as
 * conversation_state; the last checkpoint before turn_ended is the resume point.
 */
export class FakeConversation {
  readonly id: string;
  readonly client: FakeCursorClient;
  state: ConversationState = emptyConversationState();
  resumePoint: ConversationState | undefined;
  defaultModelId: string | undefined;
  /** The conversation's latest run (the IDE starts a background completion only once it is over). */
  lastRun: CursorRun | undefined;
  /** The model of the latest turn (what the IDE's picker shows for this chat). */
  lastModelId: string | undefined;

  constructor(client: FakeCursorClient, id: string) {
    this.client = client;
    this.id = id;
  }

  send(text: string, options: TurnOptions = {}): CursorRun {
    const mode = options.mode ?? (this.state.mode === undefined || this.state.mode === agent.AgentMode.UNSPECIFIED ? agent.AgentMode.AGENT : this.state.mode);
    return this.turn({ kind: "user_message", text, mode, ...(options.messageId === undefined ? {} : { messageId: options.messageId }) }, this.state, options);
  }

  /**
   * A new run telling the conversation that background work finished
   * (background_task_completion_action), from `state` (default: the last
   * settled checkpoint; a retry passes the state its first attempt used).
   */
  completeBackground(
    completions: Extract<TurnAction, { kind: "background_completion" }>["completions"],
    options: TurnOptions = {},
    state: ConversationState = this.state,
  ): CursorRun {
    return this.turn({ kind: "background_completion", completions }, state, options);
  }

  /** "Build" on a plan (execute_plan_action): a run in the execution mode that carries out `plan`. */
  executePlan(plan: string, options: TurnOptions & { planFileUri?: string } = {}): CursorRun {
    const { planFileUri, ...turnOptions } = options;
    return this.turn({ kind: "execute_plan", plan, ...(planFileUri === undefined ? {} : { planFileUri }) }, this.state, turnOptions);
  }

  /** Resolves once the conversation's latest run (if any) has ended. */
  async idle(): Promise<void> {
    for (let run = this.lastRun; run !== undefined; run = this.lastRun === run ? undefined : this.lastRun) await run.finished;
  }

  /** resume_action from the resume point (or the settled state when there is none). */
  resume(options: TurnOptions = {}): CursorRun {
    return this.turn({ kind: "resume" }, this.resumePoint ?? this.state, options);
  }

  private turn(action: TurnAction, state: ConversationState, options: TurnOptions): CursorRun {
    const modelId = options.modelId ?? this.defaultModelId;
    if (modelId !== undefined) this.lastModelId = modelId;
    const model: ModelSelection = options.model ?? (modelId === undefined ? { via: "none" } : { via: "requested_model", modelId });
    const runRequest = buildRunRequest({
      conversationId: this.id,
      conversationState: state,
      model,
      action,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.subagent === undefined ? {} : { subagent: options.subagent }),
      ...(options.context === undefined ? {} : { context: options.context }),
    });
    const runOptions: RunOptions = { runRequest };
    if (options.requestId !== undefined) runOptions.requestId = options.requestId;
    if (options.heartbeatMs !== undefined) runOptions.heartbeatMs = options.heartbeatMs;
    if (options.kv !== undefined) runOptions.kv = options.kv;
    if (options.onExec !== undefined) runOptions.onExec = options.onExec;
    if (options.onQuery !== undefined) runOptions.onQuery = options.onQuery;
    if (options.start !== undefined) runOptions.start = options.start;
    if (options.gzipFirstAppend !== undefined) runOptions.gzipFirstAppend = options.gzipFirstAppend;
    if (options.headers !== undefined) runOptions.headers = options.headers;
    const run = this.client.startRun(runOptions);
    this.lastRun = run;
    void run.finished.then((result) => {
      if (result.lastSettled !== undefined) this.state = result.lastSettled;
      if (result.resumePoint !== undefined) this.resumePoint = result.resumePoint;
      else if (result.end.kind === "ok") this.resumePoint = undefined;
    });
    return run;
  }
}
