/**
 * The JSON the admin API answers with and `npm run admin -- ... --json`
 * prints: one plain shape per store record (no protobuf type names, int64
 * counters as numbers, enums as lower-case words, money as the store's
 * decimal USD strings, unknown = absent or null, never 0). The page, the CLI
 * and scripts all read these shapes.
 */
import {
  BudgetPeriod,
  BudgetScope,
  FailureKind,
  RunStatus,
  type AuditEntry,
  type BudgetRecord,
  type CacheUsageRow,
  type LedgerEntry,
  type MemberKeyRecord,
  type MemberLimits,
  type MemberRecord,
  type MemberUsage,
  type PurgeCounts,
  type RunSpend,
  type SpendPoint,
  type TeamRecord,
  type TokenSum,
  type Usage,
} from "@byok/contracts";

/** Deep copy with bigint as number (token counts stay far below 2^53). */
export function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v))) as unknown;
}

/** A store record's own fields (without the protobuf type name) as plain JSON. */
function fieldsJson<T>(record: { readonly $typeName: string }): T {
  const { $typeName: _type, ...fields } = record;
  return plain(fields) as T;
}

const optional = <T>(value: T | undefined | null, empty: T | undefined = undefined): T | undefined => (value === undefined || value === null || value === empty ? undefined : value);

export interface MemberJson {
  memberId: string;
  name: string;
  teamId: string;
  createdAt: string;
  revokedAt?: string;
}

export function memberJson(m: MemberRecord): MemberJson {
  return { memberId: m.memberId, name: m.name, teamId: m.teamId, createdAt: m.createdAt, ...(m.revokedAt ? { revokedAt: m.revokedAt } : {}) };
}

/** A member.usage row: the store's fields, int64 sums as numbers, unreported sums absent. */
export interface MemberUsageJson {
  memberId: string;
  name: string;
  runs: number;
  /** Runs among `runs` that another run of the member started as sub-agents (Task). */
  subagentRuns: number;
  completed: number;
  failed: number;
  cancelled: number;
  inputTokens?: number;
  inputTokensRuns: number;
  outputTokens?: number;
  outputTokensRuns: number;
  cacheReadTokens?: number;
  cacheReadTokensRuns: number;
  cacheWriteTokens?: number;
  cacheWriteTokensRuns: number;
  reasoningTokens?: number;
  reasoningTokensRuns: number;
  modelCalls: number;
  costUsd: string;
  unknownCostCalls: number;
}

export function memberUsageJson(row: MemberUsage): MemberUsageJson {
  return fieldsJson<MemberUsageJson>(row);
}

/**
 * A usage.cache row: a conversation (key = conversation id, with its member)
 * or a model (key = BYOK model id, memberId ""), over the ledger's model
 * calls; token sums as numbers, unreported sums absent; `*Calls` = how many of
 * `calls` reported the sum.
 */
export interface CacheUsageJson {
  key: string;
  memberId: string;
  calls: number;
  inputTokens?: number;
  inputTokensCalls: number;
  cacheReadTokens?: number;
  cacheReadTokensCalls: number;
  cacheWriteTokens?: number;
  cacheWriteTokensCalls: number;
}

export function cacheUsageJson(row: CacheUsageRow): CacheUsageJson {
  return fieldsJson<CacheUsageJson>(row);
}

export interface TeamJson {
  teamId: string;
  name: string;
  /** null = every model. */
  allowedModels: string[] | null;
  /** null = content is kept. */
  retentionDays: number | null;
  isDefault: boolean;
  createdAt: string;
  members: number;
}

export function teamJson(t: TeamRecord): TeamJson {
  return {
    teamId: t.teamId,
    name: t.name,
    allowedModels: t.allowedModels ? [...t.allowedModels.modelIds] : null,
    retentionDays: t.retentionDays ?? null,
    isDefault: t.isDefault,
    createdAt: t.createdAt,
    members: t.members,
  };
}

export interface KeyJson {
  keyId: string;
  memberId: string;
  label: string;
  createdAt: string;
  expiresAt?: string;
  revokedAt?: string;
  replacedByKeyId?: string;
  active: boolean;
}

export function keyJson(k: MemberKeyRecord): KeyJson {
  return {
    keyId: k.keyId,
    memberId: k.memberId,
    label: k.label,
    createdAt: k.createdAt,
    ...(k.expiresAt ? { expiresAt: k.expiresAt } : {}),
    ...(k.revokedAt ? { revokedAt: k.revokedAt } : {}),
    ...(k.replacedByKeyId ? { replacedByKeyId: k.replacedByKeyId } : {}),
    active: k.active,
  };
}

export type BudgetScopeName = "member" | "team";
export type BudgetPeriodName = "daily" | "weekly" | "monthly";

export const SCOPES: Record<BudgetScopeName, BudgetScope> = { member: BudgetScope.MEMBER, team: BudgetScope.TEAM };
export const PERIODS: Record<BudgetPeriodName, BudgetPeriod> = { daily: BudgetPeriod.DAILY, weekly: BudgetPeriod.WEEKLY, monthly: BudgetPeriod.MONTHLY };

function nameOf<T extends string, V>(table: Record<T, V>, value: V): T | "unknown" {
  return (Object.entries(table) as [T, V][]).find(([, v]) => v === value)?.[0] ?? "unknown";
}

export interface BudgetJson {
  budgetId: string;
  scope: BudgetScopeName | "unknown";
  memberId?: string;
  teamId?: string;
  /** Absent = every model. */
  modelId?: string;
  period: BudgetPeriodName | "unknown";
  limitUsd: string;
  windowStart: string;
  windowEnd: string;
  chargedUsd: string;
  unknownCostCalls: number;
}

export function budgetJson(b: BudgetRecord): BudgetJson {
  return {
    budgetId: b.budgetId,
    scope: nameOf(SCOPES, b.scope),
    ...(b.memberId ? { memberId: b.memberId } : {}),
    ...(b.teamId ? { teamId: b.teamId } : {}),
    ...(b.modelId ? { modelId: b.modelId } : {}),
    period: nameOf(PERIODS, b.period),
    limitUsd: b.limitUsd,
    windowStart: b.windowStart,
    windowEnd: b.windowEnd,
    chargedUsd: b.chargedUsd,
    unknownCostCalls: b.unknownCostCalls,
  };
}

export interface LimitsJson {
  memberId: string;
  /** null = no limit. */
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRuns: number | null;
}

export function limitsJson(l: MemberLimits): LimitsJson {
  return {
    memberId: l.memberId,
    requestsPerMinute: l.requestsPerMinute ?? null,
    tokensPerMinute: l.tokensPerMinute === undefined ? null : Number(l.tokensPerMinute),
    concurrentRuns: l.concurrentRuns ?? null,
  };
}

export interface UsageJson {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

function usageJson(u: Usage | undefined): UsageJson {
  if (!u) return {};
  return fieldsJson<UsageJson>(u);
}

const STATUS: Record<string, RunStatus> = { running: RunStatus.RUNNING, completed: RunStatus.COMPLETED, cancelled: RunStatus.CANCELLED, failed: RunStatus.FAILED };
const FAILURE: Record<string, FailureKind> = {
  protocol: FailureKind.PROTOCOL,
  provider: FailureKind.PROVIDER,
  store: FailureKind.STORE,
  client: FailureKind.CLIENT,
  over_limit: FailureKind.OVER_LIMIT,
};

export interface RunJson {
  runId: string;
  conversationId: string;
  memberId: string;
  modelId: string;
  status: string;
  failureKind?: string;
  failureMessage?: string;
  startedAt: string;
  finishedAt?: string;
  durationMs?: number;
  usage: UsageJson;
  teamId?: string;
  modelCalls: number;
  /** Known costs of the run's model calls (absent when it made no accounted call). */
  costUsd?: string;
  unknownCostCalls: number;
}

export function runJson(r: RunSpend): RunJson {
  const run = r.run;
  const finished = optional(r.finishedAt, "");
  const durationMs = finished !== undefined && r.startedAt ? Date.parse(finished) - Date.parse(r.startedAt) : undefined;
  return {
    runId: run?.runId ?? "",
    conversationId: run?.conversationId ?? "",
    memberId: run?.memberId ?? "",
    modelId: run?.modelId ?? "",
    status: run ? nameOf(STATUS, run.status) : "unknown",
    ...(run && run.failureKind !== FailureKind.UNSPECIFIED ? { failureKind: nameOf(FAILURE, run.failureKind) } : {}),
    ...(run?.failureMessage ? { failureMessage: run.failureMessage } : {}),
    startedAt: r.startedAt,
    ...(finished !== undefined ? { finishedAt: finished } : {}),
    ...(durationMs !== undefined && Number.isFinite(durationMs) ? { durationMs } : {}),
    usage: usageJson(run?.usage),
    ...(r.teamId ? { teamId: r.teamId } : {}),
    modelCalls: r.modelCalls,
    ...(r.costUsd ? { costUsd: r.costUsd } : {}),
    unknownCostCalls: r.unknownCostCalls,
  };
}

function tokenSum(t: TokenSum | undefined): number | undefined {
  return t?.total === undefined ? undefined : Number(t.total);
}

export interface SpendPointJson {
  bucketStart: string;
  key: string;
  calls: number;
  costUsd: string;
  unknownCostCalls: number;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

export function spendPointJson(p: SpendPoint): SpendPointJson {
  const tokens = {
    inputTokens: tokenSum(p.inputTokens),
    outputTokens: tokenSum(p.outputTokens),
    cacheReadTokens: tokenSum(p.cacheReadTokens),
    cacheWriteTokens: tokenSum(p.cacheWriteTokens),
    reasoningTokens: tokenSum(p.reasoningTokens),
  };
  return {
    bucketStart: p.bucketStart,
    key: p.key,
    calls: p.calls,
    costUsd: p.costUsd,
    unknownCostCalls: p.unknownCostCalls,
    ...Object.fromEntries(Object.entries(tokens).filter(([, v]) => v !== undefined)),
  };
}

export function ledgerJson(e: LedgerEntry): Record<string, unknown> {
  const { $typeName: _type, usage, ...fields } = e;
  return { ...(plain(fields) as Record<string, unknown>), usage: usageJson(usage) };
}

export interface AuditJson {
  id: number;
  at: string;
  action: string;
  actor: string;
  memberId?: string;
  teamId?: string;
  keyId?: string;
  runId?: string;
  modelId?: string;
  details: Record<string, unknown>;
}

function auditDetails(json: string): Record<string, unknown> {
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return { unreadable: json };
  }
}

export function auditJson(e: AuditEntry): AuditJson {
  return {
    id: Number(e.id),
    at: e.at,
    action: e.action,
    actor: e.actor,
    ...(e.memberId ? { memberId: e.memberId } : {}),
    ...(e.teamId ? { teamId: e.teamId } : {}),
    ...(e.keyId ? { keyId: e.keyId } : {}),
    ...(e.runId ? { runId: e.runId } : {}),
    ...(e.modelId ? { modelId: e.modelId } : {}),
    details: auditDetails(e.detailsJson),
  };
}

export function purgeJson(p: PurgeCounts): Omit<PurgeCounts, "$typeName"> {
  const { $typeName: _type, ...counts } = p;
  return counts;
}
