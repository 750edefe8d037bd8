/**
 * What the accounting needs to know about a member (from the store's
 * member.policy), cached per replica: read-mostly configuration, not
 * counters (those live in the store and are leased, lease-book.ts). A cached
 * entry is used for `ttlMs`; after that it is still used while a fresh one is
 * fetched in the background, so a policy change applies within about one TTL
 * and a call never waits for the store once its member is known. Only the
 * first call of a member (or one after a long pause) waits.
 */
import { BudgetPeriod, BudgetScope, type MemberId, type MemberPolicy } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { parseUsd } from "@byok/platform";

export type BudgetPeriodName = "daily" | "weekly" | "monthly";

export interface BudgetRule {
  readonly budgetId: string;
  readonly scope: "member" | "team";
  /** undefined = every model. */
  readonly modelId: string | undefined;
  readonly period: BudgetPeriodName;
  /** Picodollars (for messages; the store holds the limit that decides). */
  readonly limitPico: bigint;
}

export interface MemberRules {
  readonly memberId: string;
  readonly teamId: string;
  readonly teamName: string;
  /** undefined = every model. */
  readonly allowedModels: ReadonlySet<string> | undefined;
  readonly budgets: readonly BudgetRule[];
  readonly requestsPerMinute: number | undefined;
  readonly tokensPerMinute: bigint | undefined;
  readonly concurrentRuns: number | undefined;
}

function periodName(period: BudgetPeriod): BudgetPeriodName {
  switch (period) {
    case BudgetPeriod.WEEKLY:
      return "weekly";
    case BudgetPeriod.MONTHLY:
      return "monthly";
    default:
      return "daily";
  }
}

export function memberRulesOf(policy: MemberPolicy): MemberRules {
  return {
    memberId: policy.memberId,
    teamId: policy.teamId,
    teamName: policy.teamName,
    allowedModels: policy.allowedModels === undefined ? undefined : new Set(policy.allowedModels.modelIds),
    budgets: policy.budgets.map((b) => ({
      budgetId: b.budgetId,
      scope: b.scope === BudgetScope.TEAM ? "team" : "member",
      modelId: b.modelId === "" ? undefined : b.modelId,
      period: periodName(b.period),
      limitPico: parseUsd(b.limitUsd) ?? 0n,
    })),
    requestsPerMinute: policy.limits?.requestsPerMinute,
    tokensPerMinute: policy.limits?.tokensPerMinute,
    concurrentRuns: policy.limits?.concurrentRuns,
  };
}

export interface MemberRulesSource {
  memberPolicy(memberId: MemberId): Promise<MemberPolicy>;
}

interface Entry {
  rules: MemberRules | undefined;
  fetchedAt: number;
  refreshing: Promise<MemberRules> | undefined;
}

export class MemberRulesCache {
  readonly #source: MemberRulesSource;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #entries = new Map<string, Entry>();

  constructor(source: MemberRulesSource, options: { ttlMs: number; now: () => number; log: Logger }) {
    this.#source = source;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now;
    this.#log = options.log;
  }

  /** The member's rules: cached, or fetched (throws StoreFailure when the store cannot answer and nothing is cached). */
  get(memberId: MemberId): Promise<MemberRules> | MemberRules {
    const entry = this.#entries.get(memberId);
    if (entry?.rules !== undefined) {
      if (this.#now() - entry.fetchedAt >= this.#ttlMs && entry.refreshing === undefined) {
        void this.#fetch(memberId, entry).catch((err: unknown) => this.#log.warn({ err, member_id: memberId }, "member policy refresh failed; using the cached one"));
      }
      return entry.rules;
    }
    if (entry?.refreshing !== undefined) return entry.refreshing;
    const fresh: Entry = { rules: undefined, fetchedAt: 0, refreshing: undefined };
    this.#entries.set(memberId, fresh);
    return this.#fetch(memberId, fresh).catch((err: unknown) => {
      if (this.#entries.get(memberId) === fresh && fresh.rules === undefined) this.#entries.delete(memberId);
      throw err;
    });
  }

  #fetch(memberId: MemberId, entry: Entry): Promise<MemberRules> {
    const started = this.#now();
    const refreshing = this.#source.memberPolicy(memberId).then(
      (policy) => {
        entry.rules = memberRulesOf(policy);
        entry.fetchedAt = started;
        entry.refreshing = undefined;
        return entry.rules;
      },
      (err: unknown) => {
        entry.refreshing = undefined;
        throw err;
      },
    );
    entry.refreshing = refreshing;
    return refreshing;
  }
}
