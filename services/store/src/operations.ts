/**
 * One handler per store operation: decodes the request into the domain call and
 * shapes the result as the operation's response. The Handlers type makes the
 * table exhaustive over STORE_OPERATIONS; the control plane's handlers (teams,
 * keys, budgets, limits, ledger, accounting) are in control/control-operations.ts.
 * `now` is the store's clock (key expiry, budget and rate windows, leases).
 */
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type pg from "pg";
import type { GetRevisionMessagesResponseSchema, StoreOperations } from "@byok/contracts";
import { getBlobs, putBlob, putBlobs } from "./blobs.ts";
import { cacheUsage } from "./cache-usage.ts";
import { compactHistory } from "./compaction.ts";
import { findConversation } from "./conversations.ts";
import { importHistory } from "./history-import.ts";
import { memberUsage } from "./member-usage.ts";
import { createMember, listMembers, revokeMember, verifyMemberKey } from "./members.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { loadRevisionHistory } from "./revisions.ts";
import { appendMessages } from "./run-append.ts";
import { beginRun, finishRun } from "./run-lifecycle.ts";
import { findChildRuns, findRun } from "./run-rows.ts";
import { findCommittedResult } from "./tool-round-rows.ts";
import { commitToolResult, createToolRound, getOpenToolRound } from "./tool-rounds.ts";
import { createAuditHandlers } from "./audit/audit-operations.ts";
import { createControlHandlers } from "./control/control-operations.ts";
import { purgeExpiredContent } from "./retention/content-purge.ts";
import type { RetentionJob } from "./retention/retention-job.ts";
import { cacheUsageRecord, failureKindFromWire, memberRecord, memberUsageRecord, runRecord, terminalStateFromWire, toolRoundRecord } from "./wire.ts";

export type OperationHandler<K extends keyof StoreOperations> = (
  request: MessageShape<StoreOperations[K]["request"]>,
) => Promise<Outcome<MessageInitShape<StoreOperations[K]["response"]>>>;

export type Handlers = { [K in keyof StoreOperations]: OperationHandler<K> };

function map<T, U>(outcome: Outcome<T>, shape: (value: T) => U): Outcome<U> {
  return outcome.kind === "ok" ? ok(shape(outcome.value)) : outcome;
}

export function createHandlers(pool: pg.Pool, now: () => Date = () => new Date(), retention?: Pick<RetentionJob, "runNow">): Handlers {
  return {
    ...createControlHandlers(pool, now),
    ...createAuditHandlers(pool, retention ?? { runNow: () => purgeExpiredContent(pool, now()) }),
    importHistory: async (req) =>
      map(await importHistory(pool, { conversationId: req.conversationId, memberId: req.memberId, messages: req.messages, baseRevisionId: req.baseRevisionId }), (v) => ({
        revisionId: v.revisionId,
      })),

    beginRun: async (req) => {
      const begun = await beginRun(pool, {
        runId: req.runId,
        conversationId: req.conversationId,
        memberId: req.memberId,
        baseRevisionId: req.baseRevisionId,
        initialMessages: req.initialMessages,
        parentRunId: req.parentRunId,
        parentToolCallId: req.parentToolCallId,
        modelId: req.modelId,
        onceClientIds: req.onceClientIds,
      });
      if (begun.kind !== "ok") return begun;
      const { run, supersededRunId, duplicateOf, startHistory } = begun.value;
      const response = { run: runRecord(run), supersededRunId: supersededRunId ?? "", duplicateOfRunId: duplicateOf ?? "" };
      if (!req.withHistory || run.status !== "running") return ok(response);
      // A first begin that made the whole history has it in hand (and no open round): nothing to read back.
      if (startHistory !== undefined) {
        return ok({ ...response, history: { messages: startHistory.messages, messageIds: startHistory.messageIds, revisionChain: startHistory.chain } });
      }
      // The head's history (immutable revisions: read after COMMIT) and a repeated begin's open round,
      // which the begin read under its locks (see repeatedBegin).
      const history = await revisionMessages(pool, run.headRevisionId ?? "", req.knownRevisionId);
      if (history.kind !== "ok") return history;
      const open = begun.value.openRound;
      return ok({ ...response, history: history.value, ...(open === undefined ? {} : { openRound: toolRoundRecord(open) }) });
    },

    appendMessages: async (req) =>
      map(
        await appendMessages(pool, {
          runId: req.runId,
          expectedHeadRevisionId: req.expectedHeadRevisionId,
          messages: req.messages,
          providerCallIndex: req.providerCallIndex,
          requestInputTokens: req.requestInputTokens,
        }),
        (v) => ({ revisionId: v.revisionId, messageIds: [...v.messageIds] }),
      ),

    finishRun: async (req) => {
      const status = terminalStateFromWire(req.status);
      if (status.kind !== "ok") return status;
      const finished = await finishRun(pool, {
        runId: req.runId,
        status: status.value,
        failureKind: failureKindFromWire(req.failureKind),
        failureMessage: req.failureMessage,
        usage: req.usage,
        beginCount: req.beginCount,
      });
      return map(finished, (run) => ({ run: runRecord(run) }));
    },

    getRun: async (req) => {
      const run = await findRun(pool, req.runId);
      return run ? ok({ run: runRecord(run) }) : reject("not_found", `run ${req.runId} not found`);
    },

    listChildRuns: async (req) => {
      if (req.parentRunId === "") return reject("invalid", "parent_run_id is required");
      return ok({ runs: (await findChildRuns(pool, req.parentRunId)).map(runRecord) });
    },

    getConversation: async (req) => {
      const conversation = await findConversation(pool, req.conversationId);
      if (!conversation) return reject("not_found", `conversation ${req.conversationId} not found`);
      return ok({
        conversationId: conversation.id,
        memberId: conversation.memberId,
        headRevisionId: conversation.headRevisionId ?? "",
        activeRunId: conversation.activeRunId ?? "",
      });
    },

    getRevisionMessages: async (req) => revisionMessages(pool, req.revisionId, req.knownRevisionId),

    compactHistory: async (req) =>
      map(
        await compactHistory(pool, {
          runId: req.runId,
          expectedHeadRevisionId: req.expectedHeadRevisionId,
          summary: req.summary,
          keptMessageIds: req.keptMessageIds,
          summarizedCount: req.summarizedCount,
          providerCallIndex: req.providerCallIndex,
        }),
        (v) => ({ revisionId: v.revisionId, messages: v.messages }),
      ),

    putBlob: async (req) => map(await putBlob(pool, req.data, req.expectedId, req.conversationId), (id) => ({ id })),

    putBlobs: async (req) => map(await putBlobs(pool, req.data, req.conversationId), (ids) => ({ ids })),

    getBlobs: async (req) => map(await getBlobs(pool, req.ids), (blobs) => ({ blobs: blobs.map((b) => ({ id: b.id, data: b.data })) })),

    createToolRound: async (req) =>
      map(
        await createToolRound(pool, {
          runId: req.runId,
          roundId: req.roundId,
          expectedHeadRevisionId: req.expectedHeadRevisionId,
          assistant: req.assistant,
          providerCallIndex: req.providerCallIndex,
          requestInputTokens: req.requestInputTokens,
        }),
        (v) => ({ round: toolRoundRecord(v.round), existing: v.existing }),
      ),

    commitToolResult: async (req) =>
      map(
        await commitToolResult(pool, { runId: req.runId, roundId: req.roundId, callId: req.callId, content: req.content, isError: req.isError }),
        (v) => ({
          revisionId: v.revisionId,
          duplicate: v.duplicate,
          roundSettled: v.roundSettled,
          completionSeq: v.completionSeq,
          appended: v.appended,
          toolRoundVersion: v.roundVersion,
          beginCount: v.beginCount,
        }),
      ),

    getOpenToolRound: async (req) => map(await getOpenToolRound(pool, req.runId), (round) => (round ? { round: toolRoundRecord(round) } : {})),

    findToolResult: async (req) => {
      if (req.conversationId === "" || req.callId === "" || req.name === "") return reject("invalid", "conversation_id, call_id and name are required");
      const found = await findCommittedResult(pool, req.conversationId, { callId: req.callId, name: req.name, argumentsJson: req.argumentsJson });
      return ok(found ? { found: true, content: found.content, isError: found.isError, runId: found.runId } : { found: false });
    },


    createMember: async (req) =>
      map(await createMember(pool, { name: req.name, teamId: req.teamId, keyLabel: req.keyLabel, keyExpiresAt: req.keyExpiresAt }, now()), (v) => ({
        member: memberRecord(v.member),
        key: v.key,
        keyId: v.keyId,
      })),

    revokeMember: async (req) => map(await revokeMember(pool, req.memberId), (member) => ({ member: memberRecord(member) })),

    verifyMemberKey: async (req) =>
      map(await verifyMemberKey(pool, req.key, now()), (v) => ({ memberId: v.member.id, name: v.member.name, keyId: v.keyId, teamId: v.member.teamId })),

    listMembers: async (req) => map(await listMembers(pool, req.includeRevoked, req.teamId), (members) => ({ members: members.map(memberRecord) })),

    memberUsage: async (req) =>
      map(await memberUsage(pool, { memberId: req.memberId, since: req.since, until: req.until }), (rows) => ({ members: rows.map(memberUsageRecord) })),

    cacheUsage: async (req) =>
      map(await cacheUsage(pool, { memberId: req.memberId, since: req.since, until: req.until, conversationLimit: req.conversationLimit }), (v) => ({
        conversations: v.conversations.map(cacheUsageRecord),
        models: v.models.map(cacheUsageRecord),
      })),
  };
}

/** revision.messages: the history of a revision with its chain, compaction and newest anchor ("" = empty). */
async function revisionMessages(pool: pg.Pool, revisionId: string, knownId = ""): Promise<Outcome<MessageInitShape<typeof GetRevisionMessagesResponseSchema>>> {
  if (revisionId === "") return ok({ messages: [], messageIds: [], revisionChain: [] });
  // One query: the chain, its messages and its newest anchor (the known revision's
  // included: it may have been measured after the caller read it, by a call built from it).
  const history = await loadRevisionHistory(pool, revisionId, knownId);
  if (!history) return reject("not_found", `revision ${revisionId} not found`);
  const anchor = history.anchor;
  return ok({
    messages: history.messages,
    messageIds: history.messageIds,
    revisionChain: history.chain,
    ...(history.compaction === undefined ? {} : { compaction: history.compaction }),
    ...(anchor === undefined ? {} : { anchor }),
    ...(history.continues === undefined ? {} : { continuesRevisionId: history.continues }),
  });
}

