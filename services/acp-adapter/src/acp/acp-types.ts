/**
 * The ACP types module: the one place in the adapter that imports the Agent
 * Client Protocol SDK (`@agentclientprotocol/sdk`, stable protocol v1), so the
 * rest of the adapter depends on the names below and nothing else of it. Lint
 * allows the SDK only here and in the modules of this folder that build the
 * SDK's agent app (agent-app.ts) and streams (link-stream.ts); nothing outside
 * services/acp-adapter imports it (tests/acp-boundary.test.ts checks the whole
 * repository).
 */
export { PROTOCOL_VERSION, RequestError, agent as agentApp, methods as acpMethods } from "@agentclientprotocol/sdk";
export type {
  AgentConnection,
  AgentContext,
  AnyMessage,
  AvailableCommand,
  ClientCapabilities,
  ContentBlock,
  Implementation,
  InitializeRequest,
  InitializeResponse,
  ListSessionsRequest,
  ListSessionsResponse,
  LoadSessionRequest,
  LoadSessionResponse,
  McpServer,
  NewSessionRequest,
  NewSessionResponse,
  PermissionOption,
  PlanEntry,
  PromptRequest,
  PromptResponse,
  RequestPermissionOutcome,
  SessionConfigOption,
  SessionInfo,
  SessionModeState,
  SessionNotification,
  SessionUpdate,
  SetSessionConfigOptionRequest,
  SetSessionConfigOptionResponse,
  SetSessionModeRequest,
  StopReason,
  Stream,
  ToolCall,
  ToolCallContent,
  ToolCallLocation,
  ToolCallStatus,
  ToolCallUpdate,
  ToolKind,
} from "@agentclientprotocol/sdk";
