/**
 * The store's request/reply operations: operation name -> request and response
 * schemas. Subject = busNames().store(operation). Every response carries either
 * its result or `error` (StoreError); @byok/store-client is the typed client.
 */
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import {
  AppendMessagesRequestSchema,
  AppendMessagesResponseSchema,
  BeginRunRequestSchema,
  BeginRunResponseSchema,
  CacheUsageRequestSchema,
  CacheUsageResponseSchema,
  CommitToolResultRequestSchema,
  CompactHistoryRequestSchema,
  CompactHistoryResponseSchema,
  CommitToolResultResponseSchema,
  CreateMemberRequestSchema,
  CreateMemberResponseSchema,
  CreateToolRoundRequestSchema,
  CreateToolRoundResponseSchema,
  FinishRunRequestSchema,
  FinishRunResponseSchema,
  GetBlobsRequestSchema,
  GetBlobsResponseSchema,
  GetConversationRequestSchema,
  GetConversationResponseSchema,
  GetOpenToolRoundRequestSchema,
  GetOpenToolRoundResponseSchema,
  GetRevisionMessagesRequestSchema,
  GetRevisionMessagesResponseSchema,
  GetRunRequestSchema,
  GetRunResponseSchema,
  ImportHistoryRequestSchema,
  ImportHistoryResponseSchema,
  ListMembersRequestSchema,
  ListMembersResponseSchema,
  MemberUsageRequestSchema,
  MemberUsageResponseSchema,
  PutBlobRequestSchema,
  PutBlobResponseSchema,
  RevokeMemberRequestSchema,
  RevokeMemberResponseSchema,
  VerifyMemberKeyRequestSchema,
  VerifyMemberKeyResponseSchema,
} from "./gen/byok/v1/store_pb.js";

export interface StoreOperation<I extends DescMessage, O extends DescMessage> {
  readonly name: string;
  readonly request: I;
  readonly response: O;
}

function op<I extends DescMessage, O extends DescMessage>(name: string, request: I, response: O): StoreOperation<I, O> {
  return { name, request, response };
}

export const STORE_OPERATIONS = {
  importHistory: op("history.import", ImportHistoryRequestSchema, ImportHistoryResponseSchema),
  beginRun: op("run.begin", BeginRunRequestSchema, BeginRunResponseSchema),
  appendMessages: op("run.append", AppendMessagesRequestSchema, AppendMessagesResponseSchema),
  finishRun: op("run.finish", FinishRunRequestSchema, FinishRunResponseSchema),
  getRun: op("run.get", GetRunRequestSchema, GetRunResponseSchema),
  getConversation: op("conversation.get", GetConversationRequestSchema, GetConversationResponseSchema),
  getRevisionMessages: op("revision.messages", GetRevisionMessagesRequestSchema, GetRevisionMessagesResponseSchema),
  compactHistory: op("revision.compact", CompactHistoryRequestSchema, CompactHistoryResponseSchema),
  putBlob: op("blob.put", PutBlobRequestSchema, PutBlobResponseSchema),
  getBlobs: op("blob.get", GetBlobsRequestSchema, GetBlobsResponseSchema),
  createToolRound: op("tool_round.create", CreateToolRoundRequestSchema, CreateToolRoundResponseSchema),
  commitToolResult: op("tool_round.commit_result", CommitToolResultRequestSchema, CommitToolResultResponseSchema),
  getOpenToolRound: op("tool_round.get_open", GetOpenToolRoundRequestSchema, GetOpenToolRoundResponseSchema),
  createMember: op("member.create", CreateMemberRequestSchema, CreateMemberResponseSchema),
  revokeMember: op("member.revoke", RevokeMemberRequestSchema, RevokeMemberResponseSchema),
  verifyMemberKey: op("member.verify", VerifyMemberKeyRequestSchema, VerifyMemberKeyResponseSchema),
  listMembers: op("member.list", ListMembersRequestSchema, ListMembersResponseSchema),
  memberUsage: op("member.usage", MemberUsageRequestSchema, MemberUsageResponseSchema),
  cacheUsage: op("usage.cache", CacheUsageRequestSchema, CacheUsageResponseSchema),
} as const;

export type StoreOperations = typeof STORE_OPERATIONS;

/** Key of a store operation in STORE_OPERATIONS (`beginRun`, ...; the wire name is its `name`). */
export type StoreOperationName = keyof StoreOperations;

/** What a caller passes for operation K (a protobuf init shape). */
export type StoreRequest<K extends StoreOperationName> = MessageInitShape<StoreOperations[K]["request"]>;

/** What the store answers to operation K (its `error` set on failure). */
export type StoreResponse<K extends StoreOperationName> = MessageShape<StoreOperations[K]["response"]>;
