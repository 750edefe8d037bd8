/**
 * @byok/contracts: the bus contract. Hand-written modules are exported by
 * name. The generated protobuf messages (proto/byok/v1, under gen/) are
 * re-exported whole: they are generated code with ~300 names that change with
 * every .proto edit, so listing them by hand would only go stale. Lint allows
 * `export *` only for modules under gen/.
 */
export {
  DEFAULT_TEAM_ID,
  InvalidIdError,
  LOCAL_MEMBER_ID,
  NO_PROVIDER_CALL,
  clientModelCallId,
  clientModelCallIndexOf,
  fallbackUserMessageClientId,
  isProviderCallId,
  isRunId,
  ledgerCallRef,
  mintConversationId,
  mintRunId,
  nextProviderCallIndex,
  parseClientModelCallIndex,
  parseConversationId,
  parseMemberId,
  parseProviderCallId,
  parseProviderCallIndex,
  parseRunId,
  parseTeamId,
  providerCallId,
  runCommandIds,
  toolRoundId,
} from "./ids.ts";
export type {
  Branded,
  ClientModelCallId,
  ClientModelCallIndex,
  CommandId,
  ConversationId,
  LedgerCallRef,
  MemberId,
  ProviderCallId,
  ProviderCallIndex,
  RunId,
  TeamId,
  ToolRoundId,
} from "./ids.ts";
export { CLIENT_KINDS, isClientKind, runClientKindName } from "./client-kind.ts";
export type { ClientKind } from "./client-kind.ts";
export {
  decodeClientEventFrame,
  decodeModelEventFrame,
  encodeClientEventFrame,
  encodeClientEventPart,
  encodeModelEventFrame,
  encodeModelEventPart,
  frameMessagesWithin,
  joinFrameParts,
} from "./event-frames.ts";
export { CALLER_PROBE_HEADER, QUEUE_GROUPS, assertSubjectToken, busNames } from "./subjects.ts";
export type { BusNames } from "./subjects.ts";
export { STORE_OPERATIONS } from "./store-api.ts";
export { historySize, measureMessage, messageSize, type MessageMeasure } from "./message-size.ts";
export type { StoreOperation, StoreOperationName, StoreOperations, StoreRequest, StoreResponse } from "./store-api.ts";
export * from "./gen/byok/v1/history_pb.js";
export * from "./gen/byok/v1/model_pb.js";
export * from "./gen/byok/v1/peers_pb.js";
export * from "./gen/byok/v1/run_pb.js";
export * from "./gen/byok/v1/store_pb.js";
export * from "./gen/byok/v1/control_pb.js";
export * from "./gen/byok/v1/audit_pb.js";
