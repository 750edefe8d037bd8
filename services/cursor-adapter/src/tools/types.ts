/**
 * The vocabulary shared by every tool module: what the session hands in (a
 * model tool call + context), what it gets back (a plan), and what a finished
 * tool produces (an outcome: the string the model sees + the typed UI card).
 *
 * The exec/interaction payload unions mirror, case for case, the oneofs that
 * agent.proto wires to tools.proto (see proto/cursor/agent/v1/TOOLS-WIRING.md),
 * so `ExecServerMessage.message = request` and `exec.onReply(clientMessage.message)`
 * type-check without casts.
 */
import type { tools } from "@byok/cursor-protocol";
import type { McpRoutes } from "./mcp-routes.ts";
import type { SubagentSetup } from "./subagent-setup.ts";
import type { WebTools } from "./web-tools.ts";

/** One complete tool call of the model (after ToolCallEnd). */
export interface ToolCallInput {
  /** Opaque provider call id, reused byte for byte (may contain "\n"). */
  callId: string;
  name: string;
  argumentsJson: string;
}

export interface ToolPlanContext {
  conversationId: string;
  /** RequestContextEnv.terminals_folder ("" when the client did not send one). */
  terminalsFolder: string;
  /** Every tool name of the run's frozen PromptSpec (static + dynamic MCP). */
  allowedToolNames: ReadonlySet<string>;
  mcp: McpRoutes;
  /** The conversation's current todo list (TodoWrite merges into it). */
  todos: readonly tools.TodoItem[];
  /** The run's prompt mode ("agent", "plan", ...): SwitchMode switches away from it. */
  mode: string;
  /** How Task starts sub-agents (child model, sub-agent types); undefined = Task is not offered. */
  subagents: SubagentSetup | undefined;
  /** UpdateCurrentStep calls completed earlier in this run (the next one is number n + 1). */
  stepUpdates: number;
  /** Gateway-side web access (fetch policy, page cache, search backend). */
  web: WebTools;
  /** When this call started (card started_at_ms; kept across resume). */
  startedAtMs: number;
  /** Clock for completed_at_ms and wait deadlines. */
  now(): number;
}

/** The ExecServerMessage.message oneof cases the gateway sends. */
export type ExecRequest =
  | { case: "shellStreamArgs"; value: tools.ShellArgs }
  | { case: "readArgs"; value: tools.ReadArgs }
  | { case: "writeArgs"; value: tools.WriteArgs }
  | { case: "deleteArgs"; value: tools.DeleteArgs }
  | { case: "grepArgs"; value: tools.GrepArgs }
  | { case: "diagnosticsArgs"; value: tools.DiagnosticsArgs }
  | { case: "mcpArgs"; value: tools.McpArgs }
  | { case: "mcpStateExecArgs"; value: tools.McpStateExecArgs }
  | { case: "readMcpResourceExecArgs"; value: tools.ReadMcpResourceExecArgs }
  | { case: "subagentArgs"; value: tools.SubagentArgs };

/** The ExecClientMessage.message oneof cases the gateway understands. */
export type ExecReply =
  | { case: "shellResult"; value: tools.ShellResult }
  | { case: "shellStream"; value: tools.ShellStream }
  | { case: "readResult"; value: tools.ReadResult }
  | { case: "writeResult"; value: tools.WriteResult }
  | { case: "deleteResult"; value: tools.DeleteResult }
  | { case: "grepResult"; value: tools.GrepResult }
  | { case: "diagnosticsResult"; value: tools.DiagnosticsResult }
  | { case: "mcpResult"; value: tools.McpResult }
  | { case: "mcpStateExecResult"; value: tools.McpStateExecResult }
  | { case: "readMcpResourceExecResult"; value: tools.ReadMcpResourceExecResult }
  | { case: "subagentResult"; value: tools.SubagentResult }
  | { case: undefined; value?: undefined };

/** InteractionQuery.query cases the gateway sends. */
export type InteractionQueryPayload =
  | { case: "askQuestionInteractionQuery"; value: tools.AskQuestionInteractionQuery }
  | { case: "switchModeRequestQuery"; value: tools.SwitchModeRequestQuery }
  | { case: "createPlanRequestQuery"; value: tools.CreatePlanRequestQuery }
  | { case: "webSearchRequestQuery"; value: tools.WebSearchRequestQuery }
  | { case: "webFetchRequestQuery"; value: tools.WebFetchRequestQuery };

/** InteractionResponse.result cases the gateway understands. */
export type InteractionReply =
  | { case: "askQuestionInteractionResponse"; value: tools.AskQuestionInteractionResponse }
  | { case: "switchModeRequestResponse"; value: tools.SwitchModeRequestResponse }
  | { case: "createPlanRequestResponse"; value: tools.CreatePlanRequestResponse }
  | { case: "webSearchRequestResponse"; value: tools.WebSearchRequestResponse }
  | { case: "webFetchRequestResponse"; value: tools.WebFetchRequestResponse }
  | { case: undefined; value?: undefined };

/** The typed variant of a ToolCall card (the ToolCall.tool oneof). */
export type ToolVariant = tools.ToolCall["tool"];

/** State the session must fold into the conversation after a tool finished. */
export type ToolEffect =
  /** A successful Read: add to ConversationStateStructure.read_paths. */
  | { kind: "read_path"; path: string }
  /** TodoWrite: the conversation's new todo list (checkpoint `todos`). */
  | { kind: "todos"; todos: tools.TodoItem[] }
  /** GetMcpTools: the client's live MCP state (routes for later CallMcpTool). */
  | { kind: "mcp_state"; servers: tools.McpStateServer[] }
  /** SwitchMode approved: the conversation's mode from the next run on (checkpoint `mode`). */
  | { kind: "mode"; mode: string }
  /** CreatePlan accepted: the plan (checkpoint `plan`) and its todos (checkpoint `todos`). */
  | { kind: "plan"; markdown: string; todos: tools.TodoItem[] }
  /** UpdateCurrentStep: one more progress step of this run. */
  | { kind: "step_update" };

export interface ToolOutcome {
  /** What the model sees; always a string. */
  content: string;
  isError: boolean;
  /** The completed card: args + typed result + tool_call_id + started/completed_at_ms. */
  toolCall: tools.ToolCall;
  effects: ToolEffect[];
}

/** One exec request; `delayMs` > 0 asks the session to wait before sending it (polling). */
export interface ExecStep {
  request: ExecRequest;
  delayMs: number;
}

export type ExecProgress =
  /** Not finished: keep waiting; forward `delta` as tool_call_delta when present. */
  | { kind: "waiting"; delta?: tools.ToolCallDelta }
  /** This step finished; send the next step under a new exec id. */
  | { kind: "next"; step: ExecStep }
  | { kind: "done"; outcome: ToolOutcome }
  /** The client answered with something this exec cannot accept. */
  | { kind: "protocol_error"; message: string };

/**
 * A client-executed tool call in progress. One object per call; the session
 * feeds it the client messages of the exec id currently in flight.
 */
export interface ExecCall {
  readonly first: ExecStep;
  /** exec_client_message for the step in flight. */
  onReply(reply: ExecReply): ExecProgress;
  /** exec_client_control_message.throw for the step in flight. */
  onThrow(error: string): ExecProgress;
  /** stream_close for the step in flight before any terminal result. */
  onClosedWithoutResult(): ExecProgress;
}

export type InteractionProgress =
  | { kind: "done"; outcome: ToolOutcome }
  /**
   * The user approved gateway-side work (WebFetch, WebSearch): run it; it
   * resolves to the outcome (failures are outcomes too) and stops early when
   * `signal` aborts (the run ended).
   */
  | { kind: "work"; run(signal: AbortSignal): Promise<ToolOutcome> }
  | { kind: "protocol_error"; message: string };

/** A result an earlier run of the conversation committed for the same tool call id. */
export interface CommittedResult {
  content: string;
  isError: boolean;
}

export type ToolPlan =
  /** Client exec(s): send `exec.first`, feed replies, complete on `done`. */
  | { kind: "exec"; started: tools.ToolCall; exec: ExecCall }
  /** Ask the user: send `query` as an InteractionQuery; its response is the result. */
  | {
      kind: "interaction";
      started: tools.ToolCall;
      query: InteractionQueryPayload;
      onResponse(reply: InteractionReply): InteractionProgress;
      /**
       * Gateway-side tools only: the completed card for a result an earlier run
       * of the conversation already committed for this call (a resumed round).
       * The session then neither asks again nor repeats the work.
       */
      reuse?: (committed: CommittedResult) => ToolOutcome;
    }
  /** Runs in the gateway: wait `delayMs`, then call complete() (started + completed back to back; it may read stored state). */
  | { kind: "server"; started: tools.ToolCall; delayMs: number; complete(): ToolOutcome | Promise<ToolOutcome> }
  /** Arguments (or the tool name) are unusable: `outcome` is the error result the model sees. */
  | { kind: "invalid"; error: string; started: tools.ToolCall; outcome: ToolOutcome };
