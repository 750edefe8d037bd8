/**
 * Building the first append of a run (AgentClientMessage.run_request) the way
 * the IDE does (cursor-agent-protocol.md §3, §15.2): conversation_state always
 * present (empty for a new chat), conversation_id, requested_model, a
 * user_message_action with UserMessage{text, message_id, mode} and a
 * RequestContext with at least env.
 */
import { randomUUID } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";

export type ConversationState = agent.ConversationStateStructure;

export function emptyConversationState(): ConversationState {
  return create(agent.ConversationStateStructureSchema, {});
}

export interface RunRequestEnv {
  osVersion: string;
  workspacePaths: string[];
  shell: string;
  timeZone: string;
  projectFolder: string;
  terminalsFolder: string;
}

export const DEFAULT_ENV: RunRequestEnv = {
  osVersion: "linux 6.8.0",
  workspacePaths: ["/home/dev/project"],
  shell: "bash",
  timeZone: "Europe/Berlin",
  projectFolder: "/home/dev/.cursor/projects/home-dev-project",
  terminalsFolder: "/home/dev/.cursor/projects/home-dev-project/terminals",
};

/** How the model is named in the request (tests of bad input use "none"). */
export type ModelSelection = { via: "requested_model"; modelId: string; parameters?: Record<string, string> } | { via: "model_details"; modelId: string } | { via: "none" };

export type TurnAction =
  | { kind: "user_message"; text: string; messageId?: string; mode?: agent.AgentMode }
  | { kind: "resume" }
  /** "Build" on a plan: execute_plan_action with the plan text and its file. */
  | { kind: "execute_plan"; plan: string; planFileUri?: string; executionMode?: agent.AgentMode }
  /** The IDE's notice that background work (a sub-agent, a shell) finished: a new run of the parent conversation. */
  | { kind: "background_completion"; completions: Array<MessageInitShape<typeof agent.BackgroundTaskCompletionSchema>> };

/** What the IDE puts into a sub-agent's run_request (cursor-agent-protocol §10). */
export interface SubagentRequest {
  typeName: string;
  /** Root conversation of the sub-agent tree. */
  conversationGroupId: string;
  suppressProgressTool?: boolean;
}

export interface RunRequestInput {
  conversationId: string;
  conversationState: ConversationState;
  model: ModelSelection;
  action: TurnAction;
  env?: Partial<RunRequestEnv>;
  preFetchedBlobs?: Array<{ id: Uint8Array; value: Uint8Array }>;
  subagent?: SubagentRequest;
  /** RequestContext extras (web_search_enabled, custom_subagents, ...). */
  context?: RequestContextExtras;
}

export interface RequestContextExtras {
  webSearchEnabled?: boolean;
  webFetchEnabled?: boolean;
  customSubagents?: Array<{ name: string; description: string; fullPath?: string }>;
}

function requestContext(env: Partial<RunRequestEnv> | undefined, extra: RequestContextExtras = {}): MessageInitShape<typeof agent.RequestContextSchema> {
  const e = { ...DEFAULT_ENV, ...env };
  return {
    ...extra,
    env: {
      osVersion: e.osVersion,
      workspacePaths: e.workspacePaths,
      shell: e.shell,
      timeZone: e.timeZone,
      projectFolder: e.projectFolder,
      terminalsFolder: e.terminalsFolder,
    },
  };
}

export function buildRunRequest(input: RunRequestInput): agent.AgentClientMessage {
  let action: MessageInitShape<typeof agent.ConversationActionSchema>;
  switch (input.action.kind) {
    case "user_message":
      action = {
        action: {
          case: "userMessageAction",
          value: {
            userMessage: {
              text: input.action.text,
              messageId: input.action.messageId ?? randomUUID(),
              mode: input.action.mode ?? agent.AgentMode.AGENT,
            },
            requestContext: requestContext(input.env, input.context),
          },
        },
      };
      break;
    case "resume":
      action = { action: { case: "resumeAction", value: { requestContext: requestContext(input.env, input.context) } } };
      break;
    case "background_completion":
      action = { action: { case: "backgroundTaskCompletionAction", value: { completions: input.action.completions } } };
      break;
    case "execute_plan":
      action = {
        action: {
          case: "executePlanAction",
          value: {
            requestContext: requestContext(input.env, input.context),
            plan: { plan: input.action.plan },
            ...(input.action.planFileUri === undefined ? {} : { planFileUri: input.action.planFileUri }),
            executionMode: input.action.executionMode ?? agent.AgentMode.AGENT,
            kickoffMessageId: randomUUID(),
          },
        },
      };
      break;
    default: {
      const never: never = input.action;
      throw new Error(`unknown turn action ${JSON.stringify(never)}`);
    }
  }

  const runRequest: MessageInitShape<typeof agent.AgentRunRequestSchema> = {
    conversationState: input.conversationState,
    action,
    conversationId: input.conversationId,
    preFetchedBlobs: (input.preFetchedBlobs ?? []).map((b) => ({ id: b.id, value: b.value })),
    ...(input.subagent === undefined
      ? {}
      : {
          subagentTypeName: input.subagent.typeName,
          conversationGroupId: input.subagent.conversationGroupId,
          ...(input.subagent.suppressProgressTool === undefined ? {} : { suppressSubagentProgressUpdateTool: input.subagent.suppressProgressTool }),
        }),
  };
  switch (input.model.via) {
    case "requested_model":
      runRequest.requestedModel = {
        modelId: input.model.modelId,
        parameters: Object.entries(input.model.parameters ?? {}).map(([id, value]) => ({ id, value })),
      };
      break;
    case "model_details":
      runRequest.modelDetails = { modelId: input.model.modelId };
      break;
    case "none":
      break;
    default: {
      const never: never = input.model;
      throw new Error(`unknown model selection ${JSON.stringify(never)}`);
    }
  }
  return create(agent.AgentClientMessageSchema, { message: { case: "runRequest", value: runRequest } });
}
