/**
 * The handlers of the control plane's store operations (control.proto):
 * decode the request into the domain call, shape the result as the response.
 * operations.ts merges them with the conversation/run handlers.
 */
import type pg from "pg";
import { DEFAULT_TEAM_ID, LeaseCounter, type SettleCallRequest } from "@byok/contracts";
import { parseUsd } from "@byok/platform";
import type { OperationHandler } from "../operations.ts";
import { getMember, setMemberTeam } from "../members.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { memberRecord, storeError } from "../wire.ts";
import { deleteBudget, listBudgets, setBudget } from "./budgets.ts";
import {
  budgetRecord,
  bucketFromWire,
  counterFromWire,
  groupFromWire,
  leaseGrantRecord,
  ledgerEntryRecord,
  memberKeyRecord,
  memberLimitsFromWire,
  memberLimitsRecord,
  memberPolicyRecord,
  periodFromWire,
  runSpendRecord,
  scopeFromWire,
  spendPointRecord,
  teamRecord,
} from "./control-wire.ts";
import { acquireLeases, releaseLeases, type LeaseAskInput } from "./leases.ts";
import { listLedger, recentRuns, spendSeries } from "./ledger-queries.ts";
import { createKey, listKeys, revokeKey, rotateKey } from "./member-keys.ts";
import { getMemberLimits, setMemberLimits } from "./member-limits.ts";
import { memberPolicy } from "./member-policy.ts";
import { keepRequestSlots, takeRequestSlot, takeRunSlot, type RunSlot } from "./run-slots.ts";
import { settleCall, settleCalls, type ClientKind, type LedgerInput, type LeaseChargeInput, type SettleResult } from "./settle.ts";
import { createTeam, deleteTeam, getTeam, listTeams, updateTeam } from "./teams.ts";

export type ControlOperation =
  | "getMember"
  | "setMemberTeam"
  | "getMemberPolicy"
  | "createTeam"
  | "updateTeam"
  | "getTeam"
  | "deleteTeam"
  | "listTeams"
  | "createMemberKey"
  | "listMemberKeys"
  | "revokeMemberKey"
  | "rotateMemberKey"
  | "setBudget"
  | "deleteBudget"
  | "listBudgets"
  | "getMemberLimits"
  | "setMemberLimits"
  | "listLedger"
  | "spendSeries"
  | "recentRuns"
  | "acquireLeases"
  | "releaseLeases"
  | "settleCall"
  | "settleCalls"
  | "takeRunSlot"
  | "takeRequestSlot"
  | "keepRequestSlots";

export type ControlHandlers = { [K in ControlOperation]: OperationHandler<K> };

/** Leases live at least 1 s and at most 10 min without renewal. */
const MIN_TTL_MS = 1_000;
const MAX_TTL_MS = 600_000;

function ttl(ms: number): number {
  return Math.min(Math.max(ms === 0 ? 30_000 : ms, MIN_TTL_MS), MAX_TTL_MS);
}

function map<T, U>(outcome: Outcome<T>, shape: (value: T) => U): Outcome<U> {
  return outcome.kind === "ok" ? ok(shape(outcome.value)) : outcome;
}

function date(text: string): Date | undefined {
  const parsed = text === "" ? undefined : new Date(text);
  return parsed === undefined || Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

function optionalUsd(name: string, text: string | undefined): Outcome<bigint | undefined> {
  if (text === undefined) return ok(undefined);
  const pico = parseUsd(text);
  return pico === undefined ? reject("invalid", `${name} is not a USD amount: ${JSON.stringify(text)}`) : ok(pico);
}

function ledgerInput(req: SettleCallRequest): Outcome<{ entry: LedgerInput; charges: LeaseChargeInput[] }> {
  const e = req.entry;
  if (e === undefined) return reject("invalid", "entry is required");
  const startedAt = date(e.startedAt);
  if (startedAt === undefined) return reject("invalid", "entry.started_at is not a timestamp");
  const cost = optionalUsd("cost_usd", e.costUsd);
  if (cost.kind !== "ok") return cost;
  const charged = optionalUsd("charged_usd", e.chargedUsd);
  if (charged.kind !== "ok") return charged;
  const charges: LeaseChargeInput[] = [];
  for (const c of req.charges) {
    const kind =
      c.counter === LeaseCounter.BUDGET ? "budget" : c.counter === LeaseCounter.REQUESTS_PER_MINUTE ? "requests_per_minute" : c.counter === LeaseCounter.TOKENS_PER_MINUTE ? "tokens_per_minute" : undefined;
    if (kind === undefined) return reject("invalid", "charge with an unknown counter");
    charges.push({ leaseId: c.leaseId, kind, amount: c.amount });
  }
  const u = e.usage;
  return ok({
    entry: {
      callRef: e.callRef,
      ticketId: req.ticketId,
      memberId: e.memberId,
      teamId: e.teamId === "" ? DEFAULT_TEAM_ID : e.teamId,
      clientKind: e.clientKind as ClientKind,
      modelId: e.modelId,
      providerId: e.providerId,
      upstreamModel: e.upstreamModel,
      runId: e.runId === "" ? null : e.runId,
      callIndex: e.runId === "" ? null : e.callIndex,
      requestId: e.requestId === "" ? null : e.requestId,
      outcome: e.outcome === "" ? "ok" : e.outcome,
      tokens: { input: u?.inputTokens, output: u?.outputTokens, cacheRead: u?.cacheReadTokens, cacheWrite: u?.cacheWriteTokens, reasoning: u?.reasoningTokens },
      costPico: cost.value,
      chargedPico: charged.value,
      startedAt,
    },
    charges,
  });
}

export function createControlHandlers(pool: pg.Pool, now: () => Date): ControlHandlers {
  return {
    getMember: async (req) => map(await getMember(pool, req.memberId), (member) => ({ member: memberRecord(member) })),
    setMemberTeam: async (req) => map(await setMemberTeam(pool, req.memberId, req.teamId), (member) => ({ member: memberRecord(member) })),
    getMemberPolicy: async (req) => {
      if (req.memberId === "") return reject("invalid", "member_id is required");
      return map(await memberPolicy(pool, req.memberId), (policy) => ({ policy: memberPolicyRecord(policy) }));
    },

    createTeam: async (req) =>
      map(await createTeam(pool, { name: req.name, allowedModels: req.allowedModels?.modelIds ?? null, retentionDays: req.retentionDays ?? null }), (team) => ({
        team: teamRecord(team),
      })),
    updateTeam: async (req) =>
      map(await updateTeam(pool, req.teamId, { name: req.name, allowedModels: req.allowedModels?.modelIds ?? null, retentionDays: req.retentionDays ?? null }), (team) => ({
        team: teamRecord(team),
      })),
    getTeam: async (req) => map(await getTeam(pool, req.teamId), (team) => ({ team: teamRecord(team) })),
    deleteTeam: async (req) => map(await deleteTeam(pool, req.teamId), () => ({})),
    listTeams: async () => map(await listTeams(pool), (teams) => ({ teams: teams.map(teamRecord) })),

    createMemberKey: async (req) =>
      map(await createKey(pool, { memberId: req.memberId, label: req.label, expiresAt: req.expiresAt }, now()), (v) => ({ key: memberKeyRecord(v.key), secret: v.secret })),
    listMemberKeys: async (req) => map(await listKeys(pool, req.memberId, req.includeInactive, now()), (keys) => ({ keys: keys.map(memberKeyRecord) })),
    revokeMemberKey: async (req) => map(await revokeKey(pool, req.keyId, now()), (key) => ({ key: memberKeyRecord(key) })),
    rotateMemberKey: async (req) =>
      map(await rotateKey(pool, { keyId: req.keyId, expiresAt: req.expiresAt, graceSeconds: req.graceSeconds }, now()), (v) => ({
        key: memberKeyRecord(v.key),
        secret: v.secret,
        previous: memberKeyRecord(v.previous),
      })),

    setBudget: async (req) => {
      const scope = scopeFromWire(req.scope);
      if (scope.kind !== "ok") return scope;
      const period = periodFromWire(req.period);
      if (period.kind !== "ok") return period;
      const input = { scope: scope.value, memberId: req.memberId, teamId: req.teamId, modelId: req.modelId, period: period.value, limitUsd: req.limitUsd };
      return map(await setBudget(pool, input, now()), (use) => ({ budget: budgetRecord(use) }));
    },
    deleteBudget: async (req) => map(await deleteBudget(pool, req.budgetId), () => ({})),
    listBudgets: async (req) => map(await listBudgets(pool, { memberId: req.memberId, teamId: req.teamId }, now()), (uses) => ({ budgets: uses.map(budgetRecord) })),
    getMemberLimits: async (req) => map(await getMemberLimits(pool, req.memberId), (limits) => ({ limits: memberLimitsRecord(limits) })),
    setMemberLimits: async (req) => map(await setMemberLimits(pool, memberLimitsFromWire(req.limits)), (limits) => ({ limits: memberLimitsRecord(limits) })),

    listLedger: async (req) =>
      map(await listLedger(pool, { runId: req.runId, memberId: req.memberId, since: req.since, until: req.until, limit: req.limit }), (rows) => ({
        entries: rows.map(ledgerEntryRecord),
      })),
    spendSeries: async (req) => {
      const groupBy = groupFromWire(req.groupBy);
      if (groupBy.kind !== "ok") return groupBy;
      const bucket = bucketFromWire(req.bucket);
      if (bucket.kind !== "ok") return bucket;
      const filter = { groupBy: groupBy.value, bucket: bucket.value, since: req.since, until: req.until, memberId: req.memberId, teamId: req.teamId, modelId: req.modelId };
      return map(await spendSeries(pool, filter), (points) => ({ points: points.map(spendPointRecord) }));
    },
    recentRuns: async (req) =>
      map(await recentRuns(pool, { limit: req.limit, memberId: req.memberId, teamId: req.teamId, before: req.before, runningOnly: req.runningOnly }), (rows) => ({
        runs: rows.map(runSpendRecord),
      })),

    acquireLeases: async (req) => {
      const asks: LeaseAskInput[] = [];
      for (const ask of req.asks) {
        const ref = counterFromWire(ask.counter, ask.budgetId, ask.memberId);
        if (ref.kind !== "ok") return ref;
        if (ask.need === 0n) return reject("invalid", "need must be at least 1");
        asks.push({ ref: ref.value, leaseId: ask.leaseId, need: ask.need, want: ask.want, overdraft: ask.overdraft });
      }
      return map(await acquireLeases(pool, req.holder, asks, now(), ttl(req.ttlMs)), (grants) => ({ grants: grants.map(leaseGrantRecord) }));
    },
    releaseLeases: async (req) =>
      map(
        await releaseLeases(
          pool,
          req.returns.map((r) => ({ leaseId: r.leaseId, keep: r.keep, close: r.close })),
          req.renewLeaseIds,
          now(),
          ttl(req.ttlMs),
        ),
        (gone) => ({ goneLeaseIds: gone }),
      ),
    settleCall: async (req) => {
      const input = ledgerInput(req);
      if (input.kind !== "ok") return input;
      return map(await settleCall(pool, input.value.entry, input.value.charges), (v) => v);
    },
    settleCalls: async (req) => {
      const inputs = req.calls.map(ledgerInput);
      const valid = inputs.flatMap((input) => (input.kind === "ok" ? [input.value] : []));
      const settled = await settleCalls(pool, valid);
      if (settled.kind !== "ok") return settled;
      let next = 0;
      const results = inputs.map((input): SettleResult => (input.kind === "ok" ? (settled.value[next++] as SettleResult) : input));
      return ok({ results: results.map((result) => (result.kind === "ok" ? result.value : { error: storeError(result.rejection) })) });
    },
    takeRunSlot: async (req) => map(await takeRunSlot(pool, req.runId, req.memberId, now()), slotWire),
    takeRequestSlot: async (req) => map(await takeRequestSlot(pool, { requestId: req.requestId, memberId: req.memberId, holder: req.holder, ttlMs: req.ttlMs }, now()), slotWire),
    keepRequestSlots: async (req) => map(await keepRequestSlots(pool, req.renewRequestIds, req.releaseRequestIds, req.ttlMs, now()), () => ({})),
  };
}

function slotWire(slot: RunSlot): { admitted: boolean; running: number; limit?: number } {
  return { admitted: slot.admitted, running: slot.running, ...(slot.limit === undefined ? {} : { limit: slot.limit }) };
}
