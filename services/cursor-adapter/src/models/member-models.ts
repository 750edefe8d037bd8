/**
 * Which BYOK models a member may see in Cursor's model list: the gateway's
 * models, narrowed to the ones the member's team allows (member.policy in the
 * store; a team without a list allows every model). The answer is cached per
 * member for `ttlMs` (a team change shows within that), and a store that does
 * not answer shows the last known list, or every model when none is known:
 * the list is a convenience, the provider gateway's accounting is what
 * refuses a model the team does not allow.
 */
import type { MemberId } from "@byok/contracts";
import type { Logger, ModelConfig } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";

export interface MemberModels {
  modelsFor(memberId: MemberId): Promise<readonly ModelConfig[]>;
}

/** Every member sees every model (no store: transport tests). */
export function everyModel(models: readonly ModelConfig[]): MemberModels {
  return { modelsFor: () => Promise.resolve(models) };
}

interface Cached {
  readonly models: readonly ModelConfig[];
  readonly at: number;
}

export function teamModels(
  models: readonly ModelConfig[],
  store: Pick<StoreClient, "memberPolicy">,
  options: { ttlMs: number; log: Logger; now?: () => number },
): MemberModels {
  const now = options.now ?? Date.now;
  const cache = new Map<string, Cached>();
  return {
    async modelsFor(memberId) {
      const cached = cache.get(memberId);
      if (cached !== undefined && now() - cached.at < options.ttlMs) return cached.models;
      try {
        const policy = await store.memberPolicy(memberId);
        const allowed = policy.allowedModels === undefined ? undefined : new Set(policy.allowedModels.modelIds);
        const visible = allowed === undefined ? models : models.filter((m) => allowed.has(m.id));
        cache.set(memberId, { models: visible, at: now() });
        return visible;
      } catch (err) {
        options.log.warn({ err, member_id: memberId }, "cannot read the member's allowed models; showing the last known list");
        return cached?.models ?? models;
      }
    },
  };
}
