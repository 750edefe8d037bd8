/**
 * This replica's leases: slices of budget and rate-limit windows granted by
 * the store (accounting.acquire), against which calls are admitted in memory.
 * A call reserves its need on the lease of each counter it is limited by;
 * settling turns the reservation into what the call used. Only when a lease
 * cannot cover a need does the admission wait for the store (a top-up, one
 * request for every short counter of the call).
 *
 * Budget leases are charged per call in the store (with the call's ledger
 * row); rate leases are counted here only, and what they used is reported
 * when they are returned (the store counts an expired one as used in full).
 *
 * A lease runs low (less than half a slice left, or its window over) → it is
 * topped up in the background; a lease whose window just ended keeps
 * admitting for WINDOW_GRACE_MS meanwhile.
 *
 * Upkeep (every TTL / 3): leases in use are renewed; idle ones (nothing
 * reserved or waiting to be written, unused for `idleMs`) are returned; ones
 * whose window ended or whose validity ran out are dropped. A lease counts as
 * valid here only until its TTL minus a safety margin from when it was
 * granted or renewed, so this replica stops using it before the store lets it
 * lapse. A crashed replica's leases lapse in the store after the TTL.
 */
import { LeaseCounter, type LeaseGrant } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { StoreFailure, type StoreClient } from "@byok/store-client";

export type CounterRef =
  | { readonly kind: "budget"; readonly budgetId: string }
  | { readonly kind: "requests_per_minute"; readonly memberId: string }
  | { readonly kind: "tokens_per_minute"; readonly memberId: string };

export function counterKeyOf(counter: CounterRef): string {
  return counter.kind === "budget" ? `budget:${counter.budgetId}` : `${counter.kind}:${counter.memberId}`;
}

export function wireCounter(counter: CounterRef): LeaseCounter {
  switch (counter.kind) {
    case "budget":
      return LeaseCounter.BUDGET;
    case "requests_per_minute":
      return LeaseCounter.REQUESTS_PER_MINUTE;
    case "tokens_per_minute":
      return LeaseCounter.TOKENS_PER_MINUTE;
    default: {
      const never: never = counter;
      throw new Error(`unknown counter ${JSON.stringify(never)}`);
    }
  }
}

/** What one call needs of one counter. */
export interface Need {
  readonly counter: CounterRef;
  readonly need: bigint;
  /** The slice to ask for when topping up (at least `need`). */
  readonly want: bigint;
  /** The call that crosses the limit may overshoot it by its need (budgets, tokens); requests never. */
  readonly overdraft: boolean;
}

export class LocalLease {
  readonly key: string;
  readonly counter: CounterRef;
  readonly leaseId: string;
  readonly windowEndMs: number;
  amount: bigint;
  consumed: bigint;
  reserved = 0n;
  validUntilMs: number;
  lastUsedMs: number;
  /** Settled calls whose charge on this lease is not written to the store yet. */
  pending = 0;
  /**
   * Multiplies the slice a top-up asks for: doubled (up to MAX_SCALE) each
   * time a top-up lands on a lease that had less than half a slice left, so a
   * busy counter gets slices that outlast the store's answer time.
   */
  scale = 1n;

  constructor(counter: CounterRef, grant: LeaseGrant, validUntilMs: number, now: number) {
    this.key = counterKeyOf(counter);
    this.counter = counter;
    this.leaseId = grant.leaseId;
    this.windowEndMs = Date.parse(grant.windowEnd);
    this.amount = grant.amount;
    this.consumed = grant.consumed;
    this.validUntilMs = validUntilMs;
    this.lastUsedMs = now;
  }

  /** Until its window ended (plus WINDOW_GRACE_MS, while the next window's lease is fetched) and while it is valid. */
  usable(now: number): boolean {
    return now < this.windowEndMs + WINDOW_GRACE_MS && now < this.validUntilMs;
  }

  available(now: number): bigint {
    if (!this.usable(now)) return 0n;
    const left = this.amount - this.consumed - this.reserved;
    return left > 0n ? left : 0n;
  }

  get busy(): boolean {
    return this.reserved > 0n || this.pending > 0;
  }
}

const MAX_SCALE = 64n;

/**
 * A lease keeps admitting calls this long after its window ended, counting
 * them in its own window, while the lease of the new window is fetched: the
 * first calls of each minute do not wait for the store. Each window still
 * counts at most its limit.
 */
export const WINDOW_GRACE_MS = 2_000;

/** A need reserved on a lease (held by the call's ticket until it settles). */
export interface Reservation {
  readonly lease: LocalLease;
  readonly need: bigint;
}

/** What a top-up brought: per need, whether the store granted anything, and the window it is in. */
export interface TopUpResult {
  readonly need: Need;
  readonly granted: boolean;
  readonly windowEndMs: number;
}

export type LeaseStore = Pick<StoreClient, "acquireLeases" | "releaseLeases">;

export interface LeaseBookOptions {
  readonly holder: string;
  readonly ttlMs: number;
  readonly idleMs: number;
  readonly now: () => number;
  readonly log: Logger;
}

export class LeaseBook {
  readonly #store: LeaseStore;
  readonly #options: LeaseBookOptions;
  /** The lease each counter is admitted on now (by counter key). */
  readonly #current = new Map<string, LocalLease>();
  /** Top-ups in flight, by counter key: a second short call waits for the first's. */
  readonly #inflight = new Map<string, Promise<void>>();
  readonly #margin: number;

  constructor(store: LeaseStore, options: LeaseBookOptions) {
    this.#store = store;
    this.#options = options;
    this.#margin = Math.max(1_000, Math.floor(options.ttlMs / 5));
  }

  /** The needs the current leases cannot cover. */
  shortfalls(needs: readonly Need[]): Need[] {
    const now = this.#options.now();
    return needs.filter((n) => (this.#current.get(counterKeyOf(n.counter))?.available(now) ?? 0n) < n.need);
  }

  /** The needs whose lease has less than `calls` more calls like this one left (worth topping up ahead). */
  runningLow(needs: readonly Need[], calls: bigint): Need[] {
    const now = this.#options.now();
    return needs.filter((n) => {
      const lease = this.#current.get(counterKeyOf(n.counter));
      if (lease === undefined || now >= lease.windowEndMs) return true;
      return lease.available(now) < n.need * calls * lease.scale;
    });
  }

  /** Reserves every need (all or none), synchronously; undefined when one is short. */
  tryReserve(needs: readonly Need[]): Reservation[] | undefined {
    if (this.shortfalls(needs).length > 0) return undefined;
    const now = this.#options.now();
    return needs.map((n) => {
      const lease = this.#current.get(counterKeyOf(n.counter)) as LocalLease;
      lease.reserved += n.need;
      lease.lastUsedMs = now;
      return { lease, need: n.need };
    });
  }

  /**
   * The top-ups already running for these counters (synchronous, so that a
   * caller that finds none starts its own before anyone else looks).
   */
  /** Whether a top-up for this need's counter is running. */
  pending(need: Need): boolean {
    return this.#inflight.has(counterKeyOf(need.counter));
  }

  inflightFor(needs: readonly Need[]): Promise<unknown> | undefined {
    const waits = needs.map((n) => this.#inflight.get(counterKeyOf(n.counter))).filter((p): p is Promise<void> => p !== undefined);
    return waits.length === 0 ? undefined : Promise.allSettled(waits);
  }

  /** One accounting.acquire for `needs`; merges the grants into the current leases. */
  async topUp(needs: readonly Need[]): Promise<TopUpResult[]> {
    const { holder, ttlMs, now } = this.#options;
    const sentAt = now();
    const request = this.#store.acquireLeases({
      holder,
      ttlMs,
      asks: needs.map((n) => {
        // What the lease still has counts: the store is asked only for the rest (it tops up the same lease).
        const lease = this.#current.get(counterKeyOf(n.counter));
        const rest = n.need - (lease?.available(sentAt) ?? 0n);
        const need = rest > 0n ? rest : 1n;
        const want = (n.want > need ? n.want : need) * (lease?.usable(sentAt) === true ? lease.scale : 1n);
        return {
          counter: wireCounter(n.counter),
          budgetId: n.counter.kind === "budget" ? n.counter.budgetId : "",
          memberId: n.counter.kind === "budget" ? "" : n.counter.memberId,
          leaseId: lease?.leaseId ?? "",
          need,
          want,
          overdraft: n.overdraft,
        };
      }),
    });
    const settled = request.then(
      () => undefined,
      () => undefined,
    );
    for (const n of needs) this.#inflight.set(counterKeyOf(n.counter), settled);
    try {
      const grants = await request;
      return needs.map((need, i) => {
        const grant = grants[i];
        if (grant === undefined) throw new StoreFailure("internal", "accounting.acquire", `no grant for ask ${i}`);
        this.#merge(need.counter, grant, sentAt + ttlMs - this.#margin);
        return { need, granted: grant.granted > 0n, windowEndMs: Date.parse(grant.windowEnd) };
      });
    } finally {
      for (const n of needs) if (this.#inflight.get(counterKeyOf(n.counter)) === settled) this.#inflight.delete(counterKeyOf(n.counter));
    }
  }

  #merge(counter: CounterRef, grant: LeaseGrant, validUntilMs: number): void {
    if (grant.leaseId === "") return;
    const key = counterKeyOf(counter);
    const lease = this.#current.get(key);
    if (lease !== undefined && lease.leaseId === grant.leaseId) {
      if (lease.available(this.#options.now()) * 2n < grant.granted && lease.scale < MAX_SCALE) lease.scale *= 2n;
      // Additive: answers to concurrent top-ups of one lease may arrive in any order.
      lease.amount += grant.granted;
      if (validUntilMs > lease.validUntilMs) lease.validUntilMs = validUntilMs;
      return;
    }
    this.#current.set(key, new LocalLease(counter, grant, validUntilMs, this.#options.now()));
  }

  /**
   * A settled call: its reservation becomes what it used. `charged`: the use
   * goes to the store with the ledger row (budget leases; see `written`); rate
   * leases are only counted here and reported when returned.
   */
  settle(reservation: Reservation, used: bigint, charged: boolean): void {
    const { lease } = reservation;
    lease.reserved -= reservation.need;
    lease.consumed += used;
    if (charged) lease.pending += 1;
    lease.lastUsedMs = this.#options.now();
  }

  /** The settled call's charges reached the store (or were given up). */
  written(reservation: Reservation): void {
    reservation.lease.pending -= 1;
  }

  /** Gives back a reservation of a call that was not made. */
  cancel(reservations: readonly Reservation[]): void {
    for (const r of reservations) r.lease.reserved -= r.need;
  }

  /** Renew leases in use, return idle ones, drop dead ones (see the module comment). */
  async upkeep(): Promise<void> {
    const { now, idleMs, ttlMs, holder } = this.#options;
    const at = now();
    const returns: Array<{ leaseId: string; keep: bigint; close: boolean }> = [];
    const renew: LocalLease[] = [];
    for (const [key, lease] of this.#current) {
      // A top-up in flight may add to this lease: leave it alone until the answer is in.
      if (this.#inflight.has(key)) continue;
      if (!lease.usable(at)) {
        if (!lease.busy) this.#current.delete(key);
        continue;
      }
      if (!lease.busy && at - lease.lastUsedMs >= idleMs) {
        returns.push({ leaseId: lease.leaseId, keep: lease.consumed, close: true });
        this.#current.delete(key);
      } else {
        renew.push(lease);
      }
    }
    if (returns.length === 0 && renew.length === 0) return;
    const gone = new Set(await this.#store.releaseLeases({ holder, returns, renewLeaseIds: renew.map((l) => l.leaseId), ttlMs }));
    for (const lease of renew) {
      if (gone.has(lease.leaseId)) lease.validUntilMs = 0;
      else lease.validUntilMs = at + ttlMs - this.#margin;
    }
  }

  /** Closes every lease (shutdown, after the last call settled and was written). */
  async closeAll(): Promise<void> {
    const returns = [...this.#current.values()].map((l) => ({ leaseId: l.leaseId, keep: l.consumed + l.reserved, close: true }));
    this.#current.clear();
    if (returns.length > 0) await this.#store.releaseLeases({ holder: this.#options.holder, returns, ttlMs: this.#options.ttlMs });
  }

  /** Leases held now (for tests and logs). */
  get size(): number {
    return this.#current.size;
  }
}
