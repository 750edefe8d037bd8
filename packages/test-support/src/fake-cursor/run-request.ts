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
  | { kind: "resume" };

export interface RunRequestInput {
  conversationId: string;
  conversationState: ConversationState;
  model: ModelSelection;
  action: TurnAction;
  env?: Partial<RunRequestEnv>;
  preFetchedBlobs?: Array<{ id: Uint8Array; value: Uint8Array }>;
}

function requestContext(env: Partial<RunRequestEnv> | undefined): MessageInitShape<typeof agent.RequestContextSchema> {
  const e = { ...DEFAULT_ENV, ...env };
  return {
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
  const action: MessageInitShape<typeof agent.ConversationActionSchema> =
    input.action.kind === "user_message"
      ? {
          action: {
            case: "userMessageAction",
            value: {
              userMessage: {
                text: input.action.text,
                messageId: input.action.messageId ?? randomUUID(),
                mode: input.action.mode ?? agent.AgentMode.AGENT,
              },
              requestContext: requestContext(input.env),
            },
          },
        }
      : { action: { case: "resumeAction", value: { requestContext: requestContext(input.env) } } };

  const runRequest: MessageInitShape<typeof agent.AgentRunRequestSchema> = {
    conversationState: input.conversationState,
    action,
    conversationId: input.conversationId,
    preFetchedBlobs: (input.preFetchedBlobs ?? []).map((b) => ({ id: b.id, value: b.value })),
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
