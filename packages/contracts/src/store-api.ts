/**
 * The store's request/reply operations: operation name -> request and response
 * schemas. Subject = busNames().store(operation). Every response carries either
 * its result or `error` (StoreError); @byok/store-client is the typed client.
 * Conversation, run, blob and member operations are in store.proto; teams,
 * member keys, budgets, limits, the ledger and the provider gateway's
 * accounting in control.proto; the audit log and retention in audit.proto.
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
  FindToolResultRequestSchema,
  FindToolResultResponseSchema,
  ListChildRunsRequestSchema,
  ListChildRunsResponseSchema,
  ListMembersRequestSchema,
  ListMembersResponseSchema,
  MemberUsageRequestSchema,
  MemberUsageResponseSchema,
  PutBlobRequestSchema,
  PutBlobResponseSchema,
  PutBlobsRequestSchema,
  PutBlobsResponseSchema,
  RevokeMemberRequestSchema,
  RevokeMemberResponseSchema,
  VerifyMemberKeyRequestSchema,
  VerifyMemberKeyResponseSchema,
} from "./gen/byok/v1/store_pb.js";
import {
  AcquireLeasesRequestSchema,
  AcquireLeasesResponseSchema,
  CreateMemberKeyRequestSchema,
  CreateMemberKeyResponseSchema,
  CreateTeamRequestSchema,
  CreateTeamResponseSchema,
  DeleteBudgetRequestSchema,
  DeleteBudgetResponseSchema,
  DeleteTeamRequestSchema,
  DeleteTeamResponseSchema,
  GetMemberLimitsRequestSchema,
  GetMemberLimitsResponseSchema,
  GetMemberPolicyRequestSchema,
  GetMemberPolicyResponseSchema,
  GetMemberRequestSchema,
  GetMemberResponseSchema,
  GetTeamRequestSchema,
  GetTeamResponseSchema,
  ListBudgetsRequestSchema,
  ListBudgetsResponseSchema,
  ListLedgerRequestSchema,
  ListLedgerResponseSchema,
  ListMemberKeysRequestSchema,
  ListMemberKeysResponseSchema,
  ListTeamsRequestSchema,
  ListTeamsResponseSchema,
  RecentRunsRequestSchema,
  RecentRunsResponseSchema,
  ReleaseLeasesRequestSchema,
  ReleaseLeasesResponseSchema,
  RevokeMemberKeyRequestSchema,
  RevokeMemberKeyResponseSchema,
  RotateMemberKeyRequestSchema,
  RotateMemberKeyResponseSchema,
  SetBudgetRequestSchema,
  SetBudgetResponseSchema,
  SetMemberLimitsRequestSchema,
  SetMemberLimitsResponseSchema,
  SetMemberTeamRequestSchema,
  SetMemberTeamResponseSchema,
  SettleCallRequestSchema,
  SettleCallResponseSchema,
  SettleCallsRequestSchema,
  SettleCallsResponseSchema,
  SpendSeriesRequestSchema,
  SpendSeriesResponseSchema,
  TakeRunSlotRequestSchema,
  TakeRunSlotResponseSchema,
  TakeRequestSlotRequestSchema,
  TakeRequestSlotResponseSchema,
  KeepRequestSlotsRequestSchema,
  KeepRequestSlotsResponseSchema,
  UpdateTeamRequestSchema,
  UpdateTeamResponseSchema,
} from "./gen/byok/v1/control_pb.js";
import { ListAuditRequestSchema, ListAuditResponseSchema, PurgeContentRequestSchema, PurgeContentResponseSchema } from "./gen/byok/v1/audit_pb.js";

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
  listChildRuns: op("run.children", ListChildRunsRequestSchema, ListChildRunsResponseSchema),
  getConversation: op("conversation.get", GetConversationRequestSchema, GetConversationResponseSchema),
  getRevisionMessages: op("revision.messages", GetRevisionMessagesRequestSchema, GetRevisionMessagesResponseSchema),
  compactHistory: op("revision.compact", CompactHistoryRequestSchema, CompactHistoryResponseSchema),
  putBlob: op("blob.put", PutBlobRequestSchema, PutBlobResponseSchema),
  putBlobs: op("blob.put_many", PutBlobsRequestSchema, PutBlobsResponseSchema),
  getBlobs: op("blob.get", GetBlobsRequestSchema, GetBlobsResponseSchema),
  createToolRound: op("tool_round.create", CreateToolRoundRequestSchema, CreateToolRoundResponseSchema),
  commitToolResult: op("tool_round.commit_result", CommitToolResultRequestSchema, CommitToolResultResponseSchema),
  getOpenToolRound: op("tool_round.get_open", GetOpenToolRoundRequestSchema, GetOpenToolRoundResponseSchema),
  findToolResult: op("tool_result.find", FindToolResultRequestSchema, FindToolResultResponseSchema),
  createMember: op("member.create", CreateMemberRequestSchema, CreateMemberResponseSchema),
  revokeMember: op("member.revoke", RevokeMemberRequestSchema, RevokeMemberResponseSchema),
  verifyMemberKey: op("member.verify", VerifyMemberKeyRequestSchema, VerifyMemberKeyResponseSchema),
  listMembers: op("member.list", ListMembersRequestSchema, ListMembersResponseSchema),
  memberUsage: op("member.usage", MemberUsageRequestSchema, MemberUsageResponseSchema),
  cacheUsage: op("usage.cache", CacheUsageRequestSchema, CacheUsageResponseSchema),
  getMember: op("member.get", GetMemberRequestSchema, GetMemberResponseSchema),
  setMemberTeam: op("member.set_team", SetMemberTeamRequestSchema, SetMemberTeamResponseSchema),
  getMemberPolicy: op("member.policy", GetMemberPolicyRequestSchema, GetMemberPolicyResponseSchema),
  createTeam: op("team.create", CreateTeamRequestSchema, CreateTeamResponseSchema),
  updateTeam: op("team.update", UpdateTeamRequestSchema, UpdateTeamResponseSchema),
  getTeam: op("team.get", GetTeamRequestSchema, GetTeamResponseSchema),
  deleteTeam: op("team.delete", DeleteTeamRequestSchema, DeleteTeamResponseSchema),
  listTeams: op("team.list", ListTeamsRequestSchema, ListTeamsResponseSchema),
  createMemberKey: op("key.create", CreateMemberKeyRequestSchema, CreateMemberKeyResponseSchema),
  listMemberKeys: op("key.list", ListMemberKeysRequestSchema, ListMemberKeysResponseSchema),
  revokeMemberKey: op("key.revoke", RevokeMemberKeyRequestSchema, RevokeMemberKeyResponseSchema),
  rotateMemberKey: op("key.rotate", RotateMemberKeyRequestSchema, RotateMemberKeyResponseSchema),
  setBudget: op("budget.set", SetBudgetRequestSchema, SetBudgetResponseSchema),
  deleteBudget: op("budget.delete", DeleteBudgetRequestSchema, DeleteBudgetResponseSchema),
  listBudgets: op("budget.list", ListBudgetsRequestSchema, ListBudgetsResponseSchema),
  getMemberLimits: op("limits.get", GetMemberLimitsRequestSchema, GetMemberLimitsResponseSchema),
  setMemberLimits: op("limits.set", SetMemberLimitsRequestSchema, SetMemberLimitsResponseSchema),
  listLedger: op("ledger.list", ListLedgerRequestSchema, ListLedgerResponseSchema),
  spendSeries: op("ledger.series", SpendSeriesRequestSchema, SpendSeriesResponseSchema),
  recentRuns: op("run.recent", RecentRunsRequestSchema, RecentRunsResponseSchema),
  acquireLeases: op("accounting.acquire", AcquireLeasesRequestSchema, AcquireLeasesResponseSchema),
  releaseLeases: op("accounting.release", ReleaseLeasesRequestSchema, ReleaseLeasesResponseSchema),
  settleCall: op("accounting.settle", SettleCallRequestSchema, SettleCallResponseSchema),
  settleCalls: op("accounting.settle_many", SettleCallsRequestSchema, SettleCallsResponseSchema),
  takeRunSlot: op("accounting.run_slot", TakeRunSlotRequestSchema, TakeRunSlotResponseSchema),
  takeRequestSlot: op("accounting.request_slot", TakeRequestSlotRequestSchema, TakeRequestSlotResponseSchema),
  keepRequestSlots: op("accounting.request_slot_keep", KeepRequestSlotsRequestSchema, KeepRequestSlotsResponseSchema),
  listAudit: op("audit.list", ListAuditRequestSchema, ListAuditResponseSchema),
  purgeContent: op("retention.purge", PurgeContentRequestSchema, PurgeContentResponseSchema),
} as const;

export type StoreOperations = typeof STORE_OPERATIONS;

/** Key of a store operation in STORE_OPERATIONS (`beginRun`, ...; the wire name is its `name`). */
export type StoreOperationName = keyof StoreOperations;

/** What a caller passes for operation K (a protobuf init shape). */
export type StoreRequest<K extends StoreOperationName> = MessageInitShape<StoreOperations[K]["request"]>;

/** What the store answers to operation K (its `error` set on failure). */
export type StoreResponse<K extends StoreOperationName> = MessageShape<StoreOperations[K]["response"]>;
