/** Conversions between the control plane's rows and the byok.v1 control messages (control.proto). */
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  BudgetPeriod as WireBudgetPeriod,
  BudgetScope as WireBudgetScope,
  LeaseCounter,
  UsageBucket as WireUsageBucket,
  UsageGroup as WireUsageGroup,
  type BudgetRecordSchema,
  type LeaseGrantSchema,
  type LedgerEntrySchema,
  type MemberKeyRecordSchema,
  type MemberLimits,
  type MemberLimitsSchema,
  type MemberPolicySchema,
  type RunSpendSchema,
  type SpendPointSchema,
  type TeamRecordSchema,
  type TokenSumSchema,
} from "@byok/contracts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { runRecord } from "../wire.ts";
import type { BudgetScope, BudgetUse } from "./budgets.ts";
import type { CounterRef } from "./counters.ts";
import type { LeaseGrantRow } from "./leases.ts";
import type { LedgerRow, RunSpendRow, SpendPointRow, TokenColumn, TokenTotal, UsageBucket, UsageGroup } from "./ledger-queries.ts";
import type { MemberKeyRow } from "./member-keys.ts";
import type { MemberLimitsRow } from "./member-limits.ts";
import type { MemberPolicyRow } from "./member-policy.ts";
import type { TeamRow } from "./teams.ts";
import type { BudgetPeriod } from "./windows.ts";

const iso = (date: Date | null): string => date?.toISOString() ?? "";

export function teamRecord(team: TeamRow): MessageInitShape<typeof TeamRecordSchema> {
  return {
    teamId: team.id,
    name: team.name,
    ...(team.allowedModels === null ? {} : { allowedModels: { modelIds: [...team.allowedModels] } }),
    ...(team.retentionDays === null ? {} : { retentionDays: team.retentionDays }),
    isDefault: team.isDefault,
    createdAt: iso(team.createdAt),
    members: team.members,
  };
}

export function memberKeyRecord(key: MemberKeyRow): MessageInitShape<typeof MemberKeyRecordSchema> {
  return {
    keyId: key.id,
    memberId: key.memberId,
    label: key.label,
    createdAt: iso(key.createdAt),
    expiresAt: iso(key.expiresAt),
    revokedAt: iso(key.revokedAt),
    replacedByKeyId: key.replacedBy ?? "",
    active: key.active,
  };
}

export function scopeFromWire(scope: WireBudgetScope): Outcome<BudgetScope> {
  switch (scope) {
    case WireBudgetScope.MEMBER:
      return ok("member");
    case WireBudgetScope.TEAM:
      return ok("team");
    default:
      return reject("invalid", "scope must be MEMBER or TEAM");
  }
}

function scopeToWire(scope: BudgetScope): WireBudgetScope {
  return scope === "member" ? WireBudgetScope.MEMBER : WireBudgetScope.TEAM;
}

export function periodFromWire(period: WireBudgetPeriod): Outcome<BudgetPeriod> {
  switch (period) {
    case WireBudgetPeriod.DAILY:
      return ok("daily");
    case WireBudgetPeriod.WEEKLY:
      return ok("weekly");
    case WireBudgetPeriod.MONTHLY:
      return ok("monthly");
    default:
      return reject("invalid", "period must be DAILY, WEEKLY or MONTHLY");
  }
}

function periodToWire(period: BudgetPeriod): WireBudgetPeriod {
  switch (period) {
    case "daily":
      return WireBudgetPeriod.DAILY;
    case "weekly":
      return WireBudgetPeriod.WEEKLY;
    case "monthly":
      return WireBudgetPeriod.MONTHLY;
    default: {
      const never: never = period;
      throw new Error(`unknown period ${String(never)}`);
    }
  }
}

export function budgetRecord(use: BudgetUse): MessageInitShape<typeof BudgetRecordSchema> {
  const { budget } = use;
  return {
    budgetId: budget.id,
    scope: scopeToWire(budget.scope),
    memberId: budget.memberId ?? "",
    teamId: budget.teamId ?? "",
    modelId: budget.modelId ?? "",
    period: periodToWire(budget.period),
    limitUsd: budget.limitUsd,
    windowStart: iso(use.window.start),
    windowEnd: iso(use.window.end),
    chargedUsd: use.chargedUsd,
    unknownCostCalls: use.unknownCostCalls,
  };
}

export function memberLimitsRecord(limits: MemberLimitsRow): MessageInitShape<typeof MemberLimitsSchema> {
  return {
    memberId: limits.memberId,
    ...(limits.requestsPerMinute === null ? {} : { requestsPerMinute: limits.requestsPerMinute }),
    ...(limits.tokensPerMinute === null ? {} : { tokensPerMinute: limits.tokensPerMinute }),
    ...(limits.concurrentRuns === null ? {} : { concurrentRuns: limits.concurrentRuns }),
  };
}

export function memberLimitsFromWire(limits: MemberLimits | undefined): MemberLimitsRow {
  return {
    memberId: limits?.memberId ?? "",
    requestsPerMinute: limits?.requestsPerMinute ?? null,
    tokensPerMinute: limits?.tokensPerMinute ?? null,
    concurrentRuns: limits?.concurrentRuns ?? null,
  };
}

export function memberPolicyRecord(policy: MemberPolicyRow): MessageInitShape<typeof MemberPolicySchema> {
  return {
    memberId: policy.memberId,
    teamId: policy.team.id,
    teamName: policy.team.name,
    ...(policy.team.allowedModels === null ? {} : { allowedModels: { modelIds: [...policy.team.allowedModels] } }),
    budgets: policy.budgets.map((b) => ({ budgetId: b.id, scope: scopeToWire(b.scope), modelId: b.modelId ?? "", period: periodToWire(b.period), limitUsd: b.limitUsd })),
    limits: memberLimitsRecord(policy.limits),
  };
}

export function counterFromWire(counter: LeaseCounter, budgetId: string, memberId: string): Outcome<CounterRef> {
  switch (counter) {
    case LeaseCounter.BUDGET:
      return ok({ kind: "budget", budgetId });
    case LeaseCounter.REQUESTS_PER_MINUTE:
      return memberId === "" ? reject("invalid", "member_id is required for a rate counter") : ok({ kind: "requests_per_minute", memberId });
    case LeaseCounter.TOKENS_PER_MINUTE:
      return memberId === "" ? reject("invalid", "member_id is required for a rate counter") : ok({ kind: "tokens_per_minute", memberId });
    default:
      return reject("invalid", "unknown lease counter");
  }
}

export function leaseGrantRecord(grant: LeaseGrantRow): MessageInitShape<typeof LeaseGrantSchema> {
  return {
    leaseId: grant.leaseId,
    granted: grant.granted,
    amount: grant.amount,
    consumed: grant.consumed,
    windowStart: iso(grant.window.start),
    windowEnd: iso(grant.window.end),
    expiresAt: iso(grant.expiresAt),
  };
}

export function ledgerEntryRecord(row: LedgerRow): MessageInitShape<typeof LedgerEntrySchema> {
  const t = row.tokens;
  return {
    callRef: row.callRef,
    attempt: row.attempt,
    memberId: row.memberId,
    teamId: row.teamId,
    clientKind: row.clientKind,
    modelId: row.modelId,
    providerId: row.providerId,
    upstreamModel: row.upstreamModel,
    runId: row.runId ?? "",
    callIndex: row.callIndex ?? 0,
    requestId: row.requestId ?? "",
    usage: { inputTokens: t.input_tokens, outputTokens: t.output_tokens, cacheReadTokens: t.cache_read_tokens, cacheWriteTokens: t.cache_write_tokens, reasoningTokens: t.reasoning_tokens },
    ...(row.costUsd === undefined ? {} : { costUsd: row.costUsd }),
    ...(row.chargedUsd === undefined ? {} : { chargedUsd: row.chargedUsd }),
    startedAt: iso(row.startedAt),
    settledAt: iso(row.settledAt),
    outcome: row.outcome,
  };
}

export function groupFromWire(group: WireUsageGroup): Outcome<UsageGroup> {
  switch (group) {
    case WireUsageGroup.MEMBER:
      return ok("member");
    case WireUsageGroup.TEAM:
      return ok("team");
    case WireUsageGroup.MODEL:
      return ok("model");
    case WireUsageGroup.CLIENT:
      return ok("client");
    default:
      return reject("invalid", "group_by must be MEMBER, TEAM, MODEL or CLIENT");
  }
}

export function bucketFromWire(bucket: WireUsageBucket): Outcome<UsageBucket> {
  switch (bucket) {
    case WireUsageBucket.HOUR:
      return ok("hour");
    case WireUsageBucket.DAY:
      return ok("day");
    default:
      return reject("invalid", "bucket must be HOUR or DAY");
  }
}

function tokenSum(total: TokenTotal): MessageInitShape<typeof TokenSumSchema> {
  return { ...(total.total === undefined ? {} : { total: total.total }), reportedCalls: total.reportedCalls };
}

export function spendPointRecord(point: SpendPointRow): MessageInitShape<typeof SpendPointSchema> {
  const t: Readonly<Record<TokenColumn, TokenTotal>> = point.tokens;
  return {
    bucketStart: iso(point.bucketStart),
    key: point.key,
    calls: point.calls,
    costUsd: point.costUsd,
    unknownCostCalls: point.unknownCostCalls,
    inputTokens: tokenSum(t.input_tokens),
    outputTokens: tokenSum(t.output_tokens),
    cacheReadTokens: tokenSum(t.cache_read_tokens),
    cacheWriteTokens: tokenSum(t.cache_write_tokens),
    reasoningTokens: tokenSum(t.reasoning_tokens),
  };
}

export function runSpendRecord(row: RunSpendRow): MessageInitShape<typeof RunSpendSchema> {
  return {
    run: runRecord(row.run),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    teamId: row.teamId,
    modelCalls: row.modelCalls,
    costUsd: row.costUsd,
    unknownCostCalls: row.unknownCostCalls,
  };
}
