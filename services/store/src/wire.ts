/** Conversions between the store's rows and the byok.v1 store messages. */
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  FailureKind,
  RunStatus,
  StoreErrorKind,
  type CacheUsageRowSchema,
  type MemberRecordSchema,
  type MemberUsageSchema,
  type RunRecordSchema,
  type StoreErrorSchema,
  type ToolRoundRecordSchema,
} from "@byok/contracts";
import type { CacheUsageRow } from "./cache-usage.ts";
import type { MemberUsageRow } from "./member-usage.ts";
import type { MemberRow } from "./members.ts";
import type { Outcome, Rejection, RejectionKind } from "./outcome.ts";
import type { RunFailureKind, RunRow, RunState, TerminalRunState } from "./run-rows.ts";
import { roundTip, type ToolRoundRow } from "./tool-round-rows.ts";

export function storeErrorKind(kind: RejectionKind): StoreErrorKind {
  switch (kind) {
    case "not_found":
      return StoreErrorKind.NOT_FOUND;
    case "not_active":
      return StoreErrorKind.NOT_ACTIVE;
    case "head_mismatch":
      return StoreErrorKind.HEAD_MISMATCH;
    case "invalid":
      return StoreErrorKind.INVALID;
    case "forbidden":
      return StoreErrorKind.FORBIDDEN;
    default: {
      const unknown: never = kind;
      throw new Error(`unhandled rejection kind ${String(unknown)}`);
    }
  }
}

export function storeError(rejection: Rejection): MessageInitShape<typeof StoreErrorSchema> {
  return { kind: storeErrorKind(rejection.kind), message: rejection.message };
}

function runStatus(state: RunState): RunStatus {
  switch (state) {
    case "running":
      return RunStatus.RUNNING;
    case "completed":
      return RunStatus.COMPLETED;
    case "cancelled":
      return RunStatus.CANCELLED;
    case "failed":
      return RunStatus.FAILED;
    default: {
      const unknown: never = state;
      throw new Error(`unhandled run state ${String(unknown)}`);
    }
  }
}

export function terminalStateFromWire(status: RunStatus): Outcome<TerminalRunState> {
  switch (status) {
    case RunStatus.COMPLETED:
      return { kind: "ok", value: "completed" };
    case RunStatus.CANCELLED:
      return { kind: "ok", value: "cancelled" };
    case RunStatus.FAILED:
      return { kind: "ok", value: "failed" };
    case RunStatus.RUNNING:
    case RunStatus.UNSPECIFIED:
      return { kind: "rejected", rejection: { kind: "invalid", message: "run.finish needs a terminal status (COMPLETED, CANCELLED or FAILED)" } };
    default:
      return { kind: "rejected", rejection: { kind: "invalid", message: `unknown run status ${String(status)}` } };
  }
}

export function failureKindFromWire(kind: FailureKind): RunFailureKind | null {
  switch (kind) {
    case FailureKind.PROTOCOL:
      return "protocol";
    case FailureKind.PROVIDER:
      return "provider";
    case FailureKind.STORE:
      return "store";
    case FailureKind.CLIENT:
      return "client";
    case FailureKind.OVER_LIMIT:
      return "over_limit";
    default:
      return null;
  }
}

function failureKindToWire(kind: RunFailureKind | null): FailureKind {
  switch (kind) {
    case "protocol":
      return FailureKind.PROTOCOL;
    case "provider":
      return FailureKind.PROVIDER;
    case "store":
      return FailureKind.STORE;
    case "client":
      return FailureKind.CLIENT;
    case "over_limit":
      return FailureKind.OVER_LIMIT;
    case null:
      return FailureKind.UNSPECIFIED;
    default: {
      const unknown: never = kind;
      throw new Error(`unhandled failure kind ${String(unknown)}`);
    }
  }
}

export function runRecord(run: RunRow): MessageInitShape<typeof RunRecordSchema> {
  return {
    runId: run.id,
    conversationId: run.conversationId,
    memberId: run.memberId,
    status: runStatus(run.status),
    startRevisionId: run.startRevisionId ?? "",
    headRevisionId: run.headRevisionId ?? "",
    providerCallIndex: run.providerCallIndex,
    failureKind: failureKindToWire(run.failureKind),
    failureMessage: run.failureMessage,
    ...(run.usage ? { usage: run.usage } : {}),
    parentRunId: run.parentRunId,
    parentToolCallId: run.parentToolCallId,
    beginCount: run.beginCount,
    modelId: run.modelId,
  };
}

export function toolRoundRecord(round: ToolRoundRow): MessageInitShape<typeof ToolRoundRecordSchema> {
  return {
    runId: round.runId,
    roundId: round.id,
    baseRevisionId: round.baseRevisionId ?? "",
    assistant: round.assistant,
    calls: round.calls,
    results: round.results.map((r) => ({ callId: r.callId, completionSeq: r.completionSeq, content: r.content, isError: r.isError, revisionId: r.revisionId })),
    settled: round.settled,
    version: round.version,
    providerCallIndex: round.providerCallIndex,
    headRevisionId: roundTip(round) ?? "",
  };
}

export function memberRecord(member: MemberRow): MessageInitShape<typeof MemberRecordSchema> {
  return {
    memberId: member.id,
    name: member.name,
    createdAt: member.createdAt.toISOString(),
    revokedAt: member.revokedAt?.toISOString() ?? "",
    teamId: member.teamId,
  };
}

/** A token sum left undefined stays unset on the wire: unknown, not 0. */
export function memberUsageRecord(row: MemberUsageRow): MessageInitShape<typeof MemberUsageSchema> {
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens } = row.tokens;
  return {
    memberId: row.memberId,
    name: row.name,
    runs: row.runs,
    completed: row.completed,
    failed: row.failed,
    cancelled: row.cancelled,
    subagentRuns: row.subagentRuns,
    inputTokens: inputTokens.total,
    inputTokensRuns: inputTokens.runs,
    outputTokens: outputTokens.total,
    outputTokensRuns: outputTokens.runs,
    cacheReadTokens: cacheReadTokens.total,
    cacheReadTokensRuns: cacheReadTokens.runs,
    cacheWriteTokens: cacheWriteTokens.total,
    cacheWriteTokensRuns: cacheWriteTokens.runs,
    reasoningTokens: reasoningTokens.total,
    reasoningTokensRuns: reasoningTokens.runs,
    modelCalls: row.modelCalls,
    costUsd: row.costUsd,
    unknownCostCalls: row.unknownCostCalls,
  };
}

export function cacheUsageRecord(row: CacheUsageRow): MessageInitShape<typeof CacheUsageRowSchema> {
  const { inputTokens, cacheReadTokens, cacheWriteTokens } = row.tokens;
  return {
    key: row.key,
    memberId: row.memberId,
    calls: row.calls,
    inputTokens: inputTokens.total,
    inputTokensCalls: inputTokens.calls,
    cacheReadTokens: cacheReadTokens.total,
    cacheReadTokensCalls: cacheReadTokens.calls,
    cacheWriteTokens: cacheWriteTokens.total,
    cacheWriteTokensCalls: cacheWriteTokens.calls,
  };
}
