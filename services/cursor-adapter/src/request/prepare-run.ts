/**
 * run_request -> PreparedRun (ARCHITECTURE §3, run flow step 1): resolve the
 * model, import the client's checkpoint history into the store, freeze the
 * PromptSpec (system text + the tools this run can be offered), link a
 * sub-agent run to its parent (request headers), and decide the action:
 * Start{context message if it changed, user message}, Start{the notices of
 * finished background work, applied once per conversation} or
 * Resume{pending assistant, whose tool calls the owner re-runs before any
 * model call}.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  fallbackUserMessageClientId,
  MessageSchema,
  parseConversationId,
  PreparedRunSchema,
  RunClientKind,
  type AssistantMessage,
  type ConversationId,
  type MemberId,
  type Message,
  type PreparedRun,
  type RunId,
} from "@byok/contracts";
import { agent, type tools } from "@byok/cursor-protocol";
import type { Logger, ModelConfig } from "@byok/platform";
import { StoreFailure, type StoreClient } from "@byok/store-client";
import { fetchBlobs, type BlobSources } from "../checkpoint/blob-fetch.ts";
import { blobKey } from "../checkpoint/blob-id.ts";
import { decodeTodos } from "../checkpoint/todo-blobs.ts";
import { promptModeOf, type PromptMode } from "../prompting/modes.ts";
import type { PromptAssets } from "../prompting/prompt-assets.ts";
import { buildPromptSpec } from "../prompting/prompt-spec.ts";
import { SessionError } from "../session/failures.ts";
import { McpRouteTable } from "../tools/mcp-routes.ts";
import { parsePendingToolCallsJson, type PendingToolCalls } from "../tools/pending-calls.ts";
import { subagentModelOf, type SubagentSetup } from "../tools/subagent-setup.ts";
import type { WebTools } from "../tools/web-tools.ts";
import { completionTurn, type CompletionTurn } from "./background-completion.ts";
import { isSystemRoot, parseRootInto, rootBlobIds, type ClientHistory, type ParsedRoots } from "./client-history.ts";
import { inlineHistoryReader, type HistoryReader } from "./history-reader.ts";
import { selectModel } from "./model-selection.ts";
import { executePlanTurn, startPlanTurn } from "./plan-actions.ts";
import { contextAfter, latestContextText } from "./request-context.ts";
import type { HistoryMemory } from "./history-memory.ts";
import { parentLinkOf } from "./subagent-link.ts";
import { toolsLeftOut } from "./tool-offer.ts";
import { imageBlobIdsToFetch, userTurnMessage } from "./user-turn.ts";

/** Errors are thrown as they are; the session maps them once (session/failures.ts). */
export interface PrepareInput {
  runId: RunId;
  memberId: MemberId;
  runRequest: agent.AgentRunRequest;
  /** Request headers of the run (x-parent-* link a sub-agent run to its parent). */
  headers: Readonly<Record<string, string>>;
  models: readonly ModelConfig[];
  /** Which web tools the gateway can run. */
  web: Pick<WebTools, "fetchEnabled" | "searchEnabled">;
  prompts: PromptAssets;
  blobSources: BlobSources;
  store: Pick<StoreClient, "importHistory">;
  /** What this process imported before (undefined = import the whole history every time). */
  history?: HistoryMemory;
  /** Reads the history roots (default: on the event loop). */
  histories?: HistoryReader;
  log: Logger;
}

export interface RunPlan {
  run: PreparedRun;
  /** The client's conversation_state: every checkpoint of the run starts from it. */
  baseState: agent.ConversationStateStructure;
  model: ModelConfig;
  systemText: string;
  /** The client's roots kept byte for byte (its system root left out). */
  historyRoots: Uint8Array[];
  /** Messages this run adds to the client's roots up front, in order. */
  newRootMessages: Message[];
  /** Text of the newest context message once `newRootMessages` are added (undefined = none). */
  contextText: string | undefined;
  /** False when nothing was imported before the publish: run.begin is the first to check the conversation's member. */
  ownershipChecked: boolean;
  /** The turn's UserMessage (Start only; simulated for a background completion). */
  userMessage: agent.UserMessage | undefined;
  /** The mode the turn asked for (written into checkpoints); undefined = keep the client's. */
  mode: agent.AgentMode | undefined;
  tools: RunToolSetup;
}

/** What the run's tool calls are planned against. */
export interface RunToolSetup {
  /** The run's prompt mode (SwitchMode moves away from it). */
  mode: PromptMode;
  /** How Task starts sub-agents; undefined when this run is not offered Task. */
  subagents: SubagentSetup | undefined;
  /** Every tool of the PromptSpec, in its order. */
  toolNames: string[];
  dynamicToolNames: ReadonlySet<string>;
  /** Routes of the client's MCP tools (run_request.mcp_tools; GetMcpTools adds more). */
  mcp: McpRouteTable;
  /** RequestContextEnv.terminals_folder ("" when not sent). */
  terminalsFolder: string;
  /** The conversation's todo list from the client's checkpoint. */
  todos: tools.TodoItem[];
  /** The staged round this run resumes: its call ids and original start time (when the JSON had one). */
  resumedRound: { callIds: string[]; startedAtMs: number | undefined } | undefined;
}

type ParsedPending = Extract<PendingToolCalls, { kind: "ok" }>;

export async function prepareRun(input: PrepareInput): Promise<RunPlan> {
  const { runRequest, log } = input;
  const state = runRequest.conversationState;
  if (state === undefined || (runRequest.conversationId ?? "") === "") {
    throw new SessionError({ kind: "invalid_request", message: "run_request needs conversation_state and conversation_id" });
  }
  const conversationId = parseConversationId(runRequest.conversationId ?? "");

  const selection = selectModel(runRequest, input.models);
  if (selection.kind === "unknown_model") throw new SessionError({ kind: "unknown_model", modelId: selection.modelId });
  if (selection.ignoredParameters.length > 0) log.warn({ parameters: selection.ignoredParameters }, "model parameters not offered for this model ignored");

  const action = runRequest.action?.action;
  let turn: { userMessage: agent.UserMessage | undefined; requestContext: agent.RequestContext | undefined } | undefined;
  let completion: CompletionTurn | undefined;
  let requestContext: agent.RequestContext | undefined;
  switch (action?.case) {
    case "userMessageAction":
      turn = { userMessage: action.value.userMessage, requestContext: action.value.requestContext };
      requestContext = action.value.requestContext;
      if (turn.userMessage === undefined) throw new SessionError({ kind: "invalid_request", message: "user_message_action without a user message" });
      break;
    case "startPlanAction":
    case "executePlanAction":
      turn = action.case === "startPlanAction" ? startPlanTurn(action.value) : executePlanTurn(action.value, fallbackUserMessageClientId(input.runId));
      if (turn === undefined) throw new SessionError({ kind: "invalid_request", message: `${action.case} without a user message or plan` });
      requestContext = turn.requestContext;
      break;
    case "resumeAction":
      requestContext = action.value.requestContext;
      break;
    case "backgroundTaskCompletionAction":
      completion = completionTurn(action.value, state.mode ?? agent.AgentMode.AGENT);
      if (completion === undefined) throw new SessionError({ kind: "invalid_request", message: "background_task_completion_action without a completion" });
      break;
    default:
      throw new SessionError({ kind: "invalid_request", message: `unsupported run action ${action?.case ?? "(none)"}` });
  }
  const userMessage = turn?.userMessage;
  const link = parentLinkOf(input.headers);
  if (link.kind === "unusable") log.warn({ reason: link.reason }, "sub-agent parent headers ignored");

  const imageIds = userMessage ? imageBlobIdsToFetch(userMessage) : [];
  const pending = pendingOf(state);
  const hasToolCalls = pending !== undefined && pending.calls.length > 0;
  // A staged answer without tool calls was committed before the stream dropped: it is history.
  const foldedRoots = pending !== undefined && !hasToolCalls ? [assistantMessage(pending.assistant)] : [];
  const imported = await importClientHistory(input, state, conversationId, foldedRoots, imageIds);
  const { history, blobs, baseRevisionId } = imported;
  const todos = decodeTodos(state.todos, blobs);

  const turnMode = userMessage !== undefined && userMessage.mode !== agent.AgentMode.UNSPECIFIED ? userMessage.mode : undefined;
  const isSubagent = (runRequest.subagentTypeName ?? "") !== "";
  const promptMode = promptModeOf(turnMode ?? state.mode, isSubagent);
  const mcpTools = runRequest.mcpTools?.mcpTools ?? [];
  // One level of sub-agents: a sub-agent's manifest has no Task.
  const subagentModelId = isSubagent ? undefined : subagentModelOf(selection.model);
  const leaveOut = toolsLeftOut({
    subagentModelId,
    webFetchEnabled: input.web.fetchEnabled,
    webSearchEnabled: input.web.searchEnabled,
    requestContext,
    suppressProgressTool: runRequest.suppressSubagentProgressUpdateTool === true,
  });
  const built = buildPromptSpec(input.prompts, promptMode, selection.model.displayName, mcpTools, leaveOut);
  if (built.kind === "protocol_error") throw new SessionError({ kind: "protocol", message: built.message });
  const prompt = built.spec;

  let runAction: MessageInitShape<typeof PreparedRunSchema>["action"];
  let newRootMessages: Message[];
  if (completion !== undefined) {
    newRootMessages = [...foldedRoots, ...completion.messages];
    runAction = { case: "start", value: { initialMessages: completion.messages, onceClientIds: completion.onceClientIds } };
    if (hasToolCalls) log.info("a background completion replaces the staged tool round of the checkpoint");
  } else if (userMessage !== undefined) {
    const context = contextAfter(turn?.requestContext, imported.contextText);
    const user = userTurnMessage(userMessage, fallbackUserMessageClientId(input.runId), (id) => blobs.get(blobKey(id)));
    const initialMessages = context ? [context, user] : [user];
    newRootMessages = [...foldedRoots, ...initialMessages];
    runAction = { case: "start", value: { initialMessages } };
    if (hasToolCalls) log.info("a new user message replaces the staged tool round of the checkpoint");
  } else {
    newRootMessages = foldedRoots;
    // Pending tool calls are re-run by the owner before any model call.
    runAction = {
      case: "resume",
      value: hasToolCalls ? { pendingAssistant: pending.assistant, pendingStartedAtMs: BigInt(pending.startedAtMs ?? 0) } : {},
    };
  }
  const resumedRound =
    userMessage === undefined && completion === undefined && hasToolCalls ? { callIds: pending.calls.map((c) => c.callId), startedAtMs: pending.startedAtMs } : undefined;

  const run = create(PreparedRunSchema, {
    runId: input.runId,
    conversationId,
    memberId: input.memberId,
    ...(link.kind === "child" ? { parentRunId: link.parentRunId, parentToolCallId: link.parentToolCallId } : {}),
    model: selection.spec,
    prompt,
    action: runAction,
    baseRevisionId,
    clientKind: RunClientKind.CURSOR,
  });
  const subagents: SubagentSetup | undefined =
    subagentModelId === undefined || !prompt.tools.some((t) => t.name === "Task")
      ? undefined
      : {
          modelId: subagentModelId,
          rootConversationId: (runRequest.conversationGroupId ?? "") || conversationId,
          customTypes: new Map((requestContext?.customSubagents ?? []).filter((s) => s.name.trim() !== "").map((s) => [s.name.trim(), s.description])),
        };
  return {
    run,
    baseState: state,
    model: selection.model,
    systemText: prompt.systemText,
    historyRoots: history.historyRoots,
    newRootMessages,
    contextText: latestContextText(newRootMessages) ?? imported.contextText,
    ownershipChecked: imported.ownershipChecked,
    userMessage: completion?.userMessage ?? userMessage,
    mode: turnMode,
    tools: {
      mode: promptMode,
      subagents,
      toolNames: prompt.tools.map((t) => t.name),
      dynamicToolNames: built.dynamicToolNames,
      mcp: new McpRouteTable(mcpTools),
      terminalsFolder: requestContext?.env?.terminalsFolder ?? "",
      todos,
      resumedRound,
    },
  };
}

interface ImportedClientHistory {
  /** The whole history's kept roots; `messages` only those read this turn. */
  history: ClientHistory;
  blobs: Map<string, Uint8Array>;
  baseRevisionId: string;
  /** Text of the newest context message of the whole history. */
  contextText: string | undefined;
  /** False when nothing was imported: the store has not yet checked that the conversation is the member's (run.begin does). */
  ownershipChecked: boolean;
}

/**
 * The client's history (plus `folded`) as a store revision. When this process
 * imported the same roots before (HistoryMemory), only the roots after them
 * are fetched, parsed and imported on top of that revision, also behind
 * another leading system root than remembered (checked to be one); a base the
 * store no longer has (retention) falls back to the whole history.
 */
async function importClientHistory(
  input: PrepareInput,
  state: agent.ConversationStateStructure,
  conversationId: ConversationId,
  folded: readonly Message[],
  extraBlobIds: readonly Uint8Array[],
  recall = true,
): Promise<ImportedClientHistory> {
  const roots = state.rootPromptMessagesJson;
  const memory = input.history;
  const remembered = recall ? memory?.recall(conversationId, input.memberId, roots) : undefined;
  const skip = remembered === undefined ? 0 : remembered.firstRoot + remembered.rootCount;
  const newRoots = roots.slice(skip);
  const lead = remembered?.leadToCheck;
  // Roots from the client are parsed as they arrive, between the KV answers.
  const rootKeys = new Set(rootBlobIds(newRoots).map(blobKey));
  const parsed: ParsedRoots = new Map();
  const { blobs, saved } = await fetchBlobs(
    [...rootBlobIds(lead === undefined ? [] : [lead]), ...rootBlobIds(newRoots), ...extraBlobIds, ...state.todos],
    input.blobSources,
    (key, bytes) => {
      if (rootKeys.has(key)) parseRootInto(parsed, key, bytes);
    },
  );
  if (lead !== undefined && !isSystemRoot(lead, blobs)) {
    // Not a system root: it is history in front of the remembered roots.
    await saved;
    return importClientHistory(input, state, conversationId, folded, extraBlobIds, false);
  }
  const read = await (input.histories ?? inlineHistoryReader).read({ roots: newRoots, blobs, firstIndex: skip, parsed });
  for (const { index, reason } of read.ignored) input.log.warn({ root: index, reason }, "history root not imported");
  const fresh = read.history;
  const messages = [...fresh.messages, ...folded];
  // Nothing onto nothing (a new conversation): the store would only create the conversation, which
  // run.begin does anyway under its lock, refusing another member's. No store round trip before the publish.
  const ownershipChecked = messages.length > 0 || (remembered !== undefined && remembered.revisionId !== "");
  let baseRevisionId = "";
  if (ownershipChecked) {
    try {
      baseRevisionId = await input.store.importHistory({
        conversationId,
        memberId: input.memberId,
        messages,
        ...(remembered === undefined || remembered.revisionId === "" ? {} : { baseRevisionId: remembered.revisionId }),
      });
    } catch (error) {
      if (remembered === undefined || !(error instanceof StoreFailure) || error.kind !== "not_found") throw error;
      input.log.info({ base_revision_id: remembered.revisionId }, "remembered history is gone from the store; importing the whole history");
      memory?.forget(conversationId);
      return importClientHistory(input, state, conversationId, folded, extraBlobIds);
    }
  }
  // The client's blobs went to the store while the history was read and imported.
  await saved;
  const history: ClientHistory = {
    historyRoots: [...(remembered?.historyRoots ?? []), ...fresh.historyRoots],
    messages: fresh.messages,
    leadingSystemRoot: remembered === undefined ? fresh.leadingSystemRoot : remembered.firstRoot === 1,
  };
  const contextText = latestContextText(messages) ?? remembered?.contextText;
  // A folded answer is not one of the roots: the revision with it is not the roots' revision.
  if (memory !== undefined && folded.length === 0) {
    memory.remember(conversationId, input.memberId, roots, {
      revisionId: baseRevisionId,
      historyRoots: history.historyRoots,
      contextText,
      leadingSystemRoot: history.leadingSystemRoot,
    });
  }
  return { history, blobs, baseRevisionId, contextText, ownershipChecked };
}

/** The client's staged assistant (pending_tool_calls[0]), validated. */
function pendingOf(state: agent.ConversationStateStructure): ParsedPending | undefined {
  const json = state.pendingToolCalls[0];
  if (json === undefined) return undefined;
  const parsed = parsePendingToolCallsJson(json);
  if (parsed.kind === "invalid") throw new SessionError({ kind: "protocol", message: parsed.message });
  return parsed;
}

function assistantMessage(assistant: AssistantMessage): Message {
  return create(MessageSchema, { body: { case: "assistant", value: assistant } });
}
