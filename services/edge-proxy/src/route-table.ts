/**
 * Per-run state the proxy keeps in memory: for each Cursor request id its member
 * and route (undecided until the run's first append), and for each conversation
 * id its member. Entries expire ROUTE_TTL_MS after their last use; waiting
 * requests keep their entry alive. A request id or conversation id belongs to
 * the first member that used it: another member gets `forbidden`.
 *
 * With several proxies a run's route is decided by the proxy that got its
 * first append; the others learn it (route-exchange.ts) with the member it is
 * bound to, and keep it here like their own decisions. Conversation bindings
 * stay per proxy: the store refuses another member's conversation durably, as
 * the adapter refuses another member's request id (x-byok-member-id).
 */
import type { RunRoute } from "./routing.ts";

export type Claim = { kind: "ok"; route: RunRoute | undefined } | { kind: "forbidden" };

export type RouteWait = { kind: "decided"; route: RunRoute } | { kind: "timeout" } | { kind: "aborted" };

interface RunEntry {
  memberId: string;
  route: RunRoute | undefined;
  expiresAt: number;
  waiters: Set<(route: RunRoute) => void>;
}

interface ConversationEntry {
  memberId: string;
  expiresAt: number;
}

export interface RouteTableOptions {
  ttlMs: number;
  /** Bound on remembered request ids and conversations each (oldest idle ones go first). */
  maxEntries?: number;
  now?: () => number;
}

export class RouteTable {
  readonly #runs = new Map<string, RunEntry>();
  readonly #conversations = new Map<string, ConversationEntry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: RouteTableOptions) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  /** Binds `requestId` to `memberId` (first use wins) and returns its route so far. */
  claimRun(requestId: string, memberId: string): Claim {
    const entry = this.#liveRun(requestId);
    if (entry) {
      if (entry.memberId !== memberId) return { kind: "forbidden" };
      entry.expiresAt = this.#now() + this.#ttlMs;
      this.#touch(this.#runs, requestId, entry);
      return { kind: "ok", route: entry.route };
    }
    this.#insert<RunEntry>(this.#runs, requestId, { memberId, route: undefined, expiresAt: this.#now() + this.#ttlMs, waiters: new Set() });
    return { kind: "ok", route: undefined };
  }

  /** The member a request id is bound to, if any. */
  runMember(requestId: string): string | undefined {
    return this.#liveRun(requestId)?.memberId;
  }

  /** Binds a conversation id to `memberId`; `false` when another member holds it. */
  claimConversation(conversationId: string, memberId: string): boolean {
    const now = this.#now();
    const entry = this.#conversations.get(conversationId);
    if (entry && entry.expiresAt > now && entry.memberId !== memberId) return false;
    this.#insert(this.#conversations, conversationId, { memberId, expiresAt: now + this.#ttlMs });
    return true;
  }

  /**
   * Records the route of a run (first decision wins: a duplicate seqno-0 append
   * cannot move a run) and wakes everything waiting for it.
   */
  decide(requestId: string, memberId: string, route: RunRoute): Claim {
    const claim = this.claimRun(requestId, memberId);
    if (claim.kind === "forbidden") return claim;
    if (claim.route !== undefined) return claim;
    const entry = this.#runs.get(requestId);
    if (!entry) return { kind: "ok", route };
    entry.route = route;
    for (const wake of entry.waiters) wake(route);
    entry.waiters.clear();
    return { kind: "ok", route };
  }

  /** The run's decided route and its member, if this proxy knows them. */
  decision(requestId: string): { memberId: string; route: RunRoute } | undefined {
    const entry = this.#liveRun(requestId);
    return entry?.route === undefined ? undefined : { memberId: entry.memberId, route: entry.route };
  }

  /**
   * Records a route another proxy decided. Its member wins over a member this
   * proxy bound the request id to while it waited (that one gets `forbidden`
   * on its next claim); a route this proxy decided itself is kept.
   */
  learn(requestId: string, memberId: string, route: RunRoute): void {
    const entry = this.#liveRun(requestId);
    if (!entry) {
      this.#insert<RunEntry>(this.#runs, requestId, { memberId, route, expiresAt: this.#now() + this.#ttlMs, waiters: new Set() });
      return;
    }
    if (entry.route !== undefined) return;
    entry.memberId = memberId;
    entry.route = route;
    entry.expiresAt = this.#now() + this.#ttlMs;
    for (const wake of entry.waiters) wake(route);
    entry.waiters.clear();
  }

  /** Waits (bounded) until the run's route is decided. Call after claimRun. */
  waitForRoute(requestId: string, timeoutMs: number, signal?: AbortSignal): Promise<RouteWait> {
    const entry = this.#runs.get(requestId);
    if (!entry) return Promise.resolve({ kind: "timeout" });
    if (entry.route !== undefined) return Promise.resolve({ kind: "decided", route: entry.route });
    return new Promise((resolve) => {
      const done = (result: RouteWait): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        entry.waiters.delete(wake);
        if (result.kind === "decided") entry.expiresAt = this.#now() + this.#ttlMs;
        resolve(result);
      };
      const wake = (route: RunRoute): void => done({ kind: "decided", route });
      const onAbort = (): void => done({ kind: "aborted" });
      const timer = setTimeout(() => done({ kind: "timeout" }), timeoutMs);
      entry.waiters.add(wake);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  get size(): { runs: number; conversations: number } {
    return { runs: this.#runs.size, conversations: this.#conversations.size };
  }

  #liveRun(requestId: string): RunEntry | undefined {
    const entry = this.#runs.get(requestId);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now() && entry.waiters.size === 0) {
      this.#runs.delete(requestId);
      return undefined;
    }
    return entry;
  }

  #touch<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
  }

  /** Inserts as most recent; beyond the bound, the oldest idle entries go (expired ones are dropped on access). */
  #insert<V extends { expiresAt: number }>(map: Map<string, V>, key: string, value: V): void {
    this.#touch(map, key, value);
    for (const [k, v] of map) {
      if (map.size <= this.#maxEntries) break;
      const busy = "waiters" in v && v.waiters instanceof Set && v.waiters.size > 0;
      if (!busy && k !== key) map.delete(k);
    }
  }
}
