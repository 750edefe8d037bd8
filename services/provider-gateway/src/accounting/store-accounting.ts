/**
 * The gateway's call accounting (the CallAccounting behind the seam in
 * call-accounting.ts), with the store as the truth: the member's rules come
 * from member.policy (cached, member-rules.ts), budgets and per-minute limits
 * are enforced on leased slices of their windows (lease-book.ts), the
 * concurrent-run limit by the store's run slots at a run's first call (and
 * by request slots for the HTTP front's requests: one request holds a slot
 * of the same limit until it is settled, renewed by upkeep meanwhile), and
 * every admitted call becomes one ledger row with its exact cost
 * (pricing.ts, written by ledger-writer.ts).
 *
 * admit(): allowed model? -> run slot (first call of a run) or request slot
 * (an HTTP request), only with a concurrent-run limit -> reserve the call's needs: its cost bound on every
 * budget that applies (member, team, per model), 1 request and its token
 * bound on the member's per-minute limits. Needs the leases cover are
 * reserved without I/O; others wait for one top-up request.
 * settle(): the reservation becomes the real use (cost, or the cost bound
 * when the cost is unknown; provider-reported tokens, or the token bound), the
 * ledger row is queued, the observer hears the cost.
 */
import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { LOCAL_MEMBER_ID, ledgerCallRef, parseMemberId, parseRunId, type LeaseChargeSchema, type MemberId, type StoreRequest } from "@byok/contracts";
import { formatUsd, type Logger } from "@byok/platform";
import { StoreFailure, type StoreClient } from "@byok/store-client";
import type { AccountingTicket, AdmissionDecision, CallAccounting, CallAdmission, CallUsage } from "./call-accounting.ts";
import { LeaseBook, wireCounter, type CounterRef, type Need, type Reservation } from "./lease-book.ts";
import { LedgerWriter } from "./ledger-writer.ts";
import { budgetUnpriced, budgetUsedUp, rateUsedUp, tooManyRuns, unknownRun, type Rejection } from "./limit-decisions.ts";
import { MemberRulesCache, type BudgetRule, type MemberRules } from "./member-rules.ts";
import type { AccountedModels } from "./price-table.ts";
import { callCost, costBound, type CallCost, type ModelPrice } from "./pricing.ts";

/**
 * Hears each settled call's cost (the metrics); must be cheap and must not
 * throw. Refusals are counted where the caller applies the decision
 * (invoke-server.ts), not here.
 */
export interface AccountingObserver {
  costRecorded(modelId: string, teamId: string, cost: CallCost): void;
}

export const noAccountingObserver: AccountingObserver = { costRecorded: () => undefined };

export type AccountingStore = Pick<StoreClient, "memberPolicy" | "acquireLeases" | "releaseLeases" | "settleCalls" | "takeRunSlot" | "takeRequestSlot" | "keepRequestSlots">;

export interface StoreAccountingOptions {
  readonly store: AccountingStore;
  readonly models: AccountedModels;
  /** This replica's name on its leases. */
  readonly holder: string;
  readonly policyTtlMs: number;
  readonly leaseTtlMs: number;
  readonly leaseIdleMs: number;
  /** How many calls' worth of need a top-up asks for (half of it left triggers the next top-up ahead of time). */
  readonly leaseCalls: number;
  /** How long settled calls wait for company before their ledger write goes out (ledger-writer.ts); default 0. */
  readonly ledgerLingerMs?: number;
  readonly log: Logger;
  readonly observer?: AccountingObserver;
  readonly now?: () => number;
}

/** What a ticket carries from admit to settle. */
interface Hold {
  readonly ticketId: string;
  readonly startedAt: Date;
  readonly teamId: string;
  readonly price: ModelPrice | undefined;
  readonly reservations: ReadonlyArray<{ readonly reservation: Reservation; readonly counter: CounterRef }>;
  readonly costBound: bigint | undefined;
  readonly tokenBound: bigint;
  /** The request slot this call holds (an HTTP request under a concurrent-run limit). */
  readonly requestSlot: string | undefined;
}

/** A budget or rate need with what to say when it is refused. */
interface Limited {
  readonly need: Need;
  readonly refuse: (resetAtMs: number) => Rejection;
}

/** Rounds in which a short counter waits for a top-up already running, and rounds in all. */
const WAIT_ROUNDS = 3;
const MAX_ROUNDS = 8;
/** The context window assumed for a model the price table does not know (it always knows the configured ones). */
const FALLBACK_CONTEXT_WINDOW = 128_000;

export class StoreAccounting implements CallAccounting {
  readonly #options: StoreAccountingOptions;
  readonly #rules: MemberRulesCache;
  readonly #leases: LeaseBook;
  readonly #writer: LedgerWriter;
  readonly #observer: AccountingObserver;
  readonly #now: () => number;
  readonly #upkeep: NodeJS.Timeout;
  #upkeepRunning: Promise<void> | undefined;
  /** Request slots of calls in flight, with their member (renewed by upkeep until the call is settled). */
  readonly #requestSlots = new Map<string, string>();
  /**
   * Per member, the release of a request slot this process sent last and the store has not answered
   * yet. A member's next request waits for it before it takes a slot: a client that sends its next
   * request as soon as a stream ended is not refused for the slot of the request it just finished.
   */
  readonly #releasing = new Map<string, Promise<void>>();

  constructor(options: StoreAccountingOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#observer = options.observer ?? noAccountingObserver;
    this.#rules = new MemberRulesCache(options.store, { ttlMs: options.policyTtlMs, now: this.#now, log: options.log });
    this.#leases = new LeaseBook(options.store, { holder: options.holder, ttlMs: options.leaseTtlMs, idleMs: options.leaseIdleMs, now: this.#now, log: options.log });
    this.#writer = new LedgerWriter(options.store, { log: options.log, lingerMs: options.ledgerLingerMs ?? 0 });
    this.#upkeep = setInterval(() => void this.upkeep(), Math.max(100, Math.floor(options.leaseTtlMs / 3)));
    this.#upkeep.unref();
  }

  async admit(call: CallAdmission): Promise<AdmissionDecision> {
    const rules = await this.#rules.get(memberOf(call));
    if (rules.allowedModels !== undefined && !rules.allowedModels.has(call.routeId)) {
      return { kind: "forbidden", message: `model ${call.routeId} is not available to team ${JSON.stringify(rules.teamName)}` };
    }
    const model = this.#options.models.get(call.routeId);
    const price = model?.price;
    const outputBound = call.maxOutputTokens ?? Math.max(1, (model?.contextWindow ?? FALLBACK_CONTEXT_WINDOW) - call.inputTokenEstimate);
    const tokenBound = BigInt(call.inputTokenEstimate + outputBound);
    const bound = costBound(price, call.inputTokenEstimate, outputBound);

    const budgets = rules.budgets.filter((b) => b.modelId === undefined || b.modelId === call.routeId);
    const unpriced = bound === undefined ? budgets[0] : undefined;
    if (unpriced !== undefined) return this.#refused(budgetUnpriced(unpriced, rules.teamName, call.routeId));

    const slot = await this.#runSlot(call, rules);
    if (slot !== undefined) return this.#refused(slot);
    const requestSlot = await this.#requestSlot(call, rules);
    if (requestSlot.kind === "refused") return this.#refused(requestSlot.rejection);

    const limited = this.#needs(call, rules, budgets, bound ?? 0n, tokenBound);
    let reserved;
    try {
      reserved = await this.#reserve(limited);
    } catch (err) {
      this.#releaseRequestSlot(requestSlot.id);
      throw err;
    }
    if (reserved.kind === "refused") {
      this.#releaseRequestSlot(requestSlot.id);
      return this.#refused(reserved.rejection);
    }
    const hold: Hold = {
      ticketId: randomUUID(),
      startedAt: new Date(this.#now()),
      teamId: rules.teamId,
      price,
      reservations: reserved.reservations.map((reservation, i) => ({ reservation, counter: (limited[i] as Limited).need.counter })),
      costBound: bound,
      tokenBound,
      requestSlot: requestSlot.id,
    };
    return { kind: "admitted", ticket: { admission: call, lease: hold } };
  }

  async settle(ticket: AccountingTicket, usage: CallUsage | undefined, outcome = "unknown"): Promise<void> {
    const hold = ticket.lease as Hold | undefined;
    if (hold === undefined) return;
    this.#releaseRequestSlot(hold.requestSlot);
    const call = ticket.admission;
    const cost = callCost(hold.price, usage);
    const charged = cost.kind === "known" ? cost.pico : hold.costBound;
    const tokens = usage?.inputTokens !== undefined && usage.outputTokens !== undefined ? BigInt(usage.inputTokens + usage.outputTokens) : hold.tokenBound;
    const charges: Array<MessageInitShape<typeof LeaseChargeSchema>> = [];
    const written: Reservation[] = [];
    for (const { reservation, counter } of hold.reservations) {
      const used = counter.kind === "budget" ? (charged ?? 0n) : counter.kind === "requests_per_minute" ? 1n : tokens;
      const perCall = counter.kind === "budget";
      this.#leases.settle(reservation, used, perCall);
      if (!perCall) continue;
      written.push(reservation);
      charges.push({ leaseId: reservation.lease.leaseId, counter: wireCounter(counter), amount: used });
    }
    const reference = call.call.kind === "run-call" ? { runId: call.call.runId, callIndex: call.call.callIndex } : { requestId: call.call.requestId };
    const request: StoreRequest<"settleCall"> = {
      ticketId: hold.ticketId,
      charges,
      entry: {
        callRef: ledgerCallRef(reference),
        memberId: memberOf(call),
        teamId: hold.teamId,
        clientKind: call.clientKind,
        modelId: call.routeId,
        providerId: call.providerId,
        upstreamModel: call.upstreamModel,
        ...("runId" in reference ? { runId: reference.runId, callIndex: reference.callIndex } : { requestId: reference.requestId }),
        usage: usageOf(usage),
        ...(cost.kind === "known" ? { costUsd: formatUsd(cost.pico) } : {}),
        ...(charged === undefined ? {} : { chargedUsd: formatUsd(charged) }),
        startedAt: hold.startedAt.toISOString(),
        outcome,
      },
    };
    this.#writer.enqueue(request, () => {
      for (const reservation of written) this.#leases.written(reservation);
    });
    if (cost.kind === "unknown") this.#options.log.info({ call_ref: request.entry?.callRef, reason: cost.reason }, "model call cost unknown");
    this.#observer.costRecorded(call.routeId, hold.teamId, cost);
  }

  /** Renew, return and drop leases now (also runs on a timer). */
  upkeep(): Promise<void> {
    this.#upkeepRunning ??= Promise.all([this.#leases.upkeep(), this.#renewRequestSlots()])
      .then(() => undefined)
      .catch((err: unknown) => this.#options.log.warn({ err }, "lease upkeep failed"))
      .finally(() => (this.#upkeepRunning = undefined));
    return this.#upkeepRunning;
  }

  /** Shutdown, after the last call settled: write what is queued (up to `flushMs`), then return every lease. */
  async close(flushMs = 10_000): Promise<void> {
    clearInterval(this.#upkeep);
    await this.#writer.flush(flushMs);
    await this.#upkeepRunning;
    await this.#leases.closeAll().catch((err: unknown) => this.#options.log.warn({ err }, "could not return the leases at shutdown; they lapse after their TTL"));
  }

  /** Ledger writes not done yet. */
  get backlog(): number {
    return this.#writer.backlog;
  }

  #refused(rejection: Rejection): AdmissionDecision {
    return rejection;
  }

  /** An HTTP request takes one of the member's concurrent-run slots for as long as its call runs (only when the member has that limit). */
  async #requestSlot(call: CallAdmission, rules: MemberRules): Promise<{ kind: "held"; id: string | undefined } | { kind: "refused"; rejection: Rejection }> {
    if (rules.concurrentRuns === undefined || call.call.kind !== "request") return { kind: "held", id: undefined };
    const { requestId } = call.call;
    const member = memberOf(call);
    await this.#releasing.get(member);
    const slot = await this.#options.store.takeRequestSlot(requestId, member, this.#options.holder, this.#options.leaseTtlMs);
    if (!slot.admitted) return { kind: "refused", rejection: tooManyRuns(slot.limit ?? rules.concurrentRuns, slot.running) };
    this.#requestSlots.set(requestId, member);
    return { kind: "held", id: requestId };
  }

  /** Frees a request slot now; if the store cannot be told, the slot lapses after the lease TTL. */
  #releaseRequestSlot(requestId: string | undefined): void {
    const member = requestId === undefined ? undefined : this.#requestSlots.get(requestId);
    if (requestId === undefined || member === undefined) return;
    this.#requestSlots.delete(requestId);
    const released: Promise<void> = this.#options.store
      .keepRequestSlots([], [requestId], this.#options.leaseTtlMs)
      .then(
        () => undefined,
        (err: unknown) => this.#options.log.warn({ err, request_id: requestId }, "could not release a request slot; it lapses after its TTL"),
      )
      .finally(() => {
        if (this.#releasing.get(member) === released) this.#releasing.delete(member);
      });
    this.#releasing.set(member, released);
  }

  async #renewRequestSlots(): Promise<void> {
    if (this.#requestSlots.size === 0) return;
    await this.#options.store.keepRequestSlots([...this.#requestSlots.keys()], [], this.#options.leaseTtlMs);
  }

  /** The first call of a run takes one of the member's run slots (only when it has a concurrent-run limit). */
  async #runSlot(call: CallAdmission, rules: MemberRules): Promise<Rejection | undefined> {
    if (rules.concurrentRuns === undefined || call.call.kind !== "run-call" || call.call.callIndex !== 1) return undefined;
    try {
      const slot = await this.#options.store.takeRunSlot(parseRunId(call.call.runId), memberOf(call));
      return slot.admitted ? undefined : tooManyRuns(slot.limit ?? rules.concurrentRuns, slot.running);
    } catch (err) {
      if (err instanceof StoreFailure && (err.kind === "not_found" || err.kind === "forbidden")) return unknownRun();
      throw err;
    }
  }

  #needs(call: CallAdmission, rules: MemberRules, budgets: readonly BudgetRule[], bound: bigint, tokenBound: bigint): Limited[] {
    const times = BigInt(Math.max(1, this.#options.leaseCalls));
    const limited: Limited[] = [];
    if (bound > 0n) {
      for (const budget of budgets) {
        limited.push({
          need: { counter: { kind: "budget", budgetId: budget.budgetId }, need: bound, want: bound * times, overdraft: true },
          refuse: (resetAtMs) => budgetUsedUp(budget, rules.teamName, resetAtMs, this.#now()),
        });
      }
    }
    const rpm = rules.requestsPerMinute;
    if (rpm !== undefined) {
      limited.push({
        need: { counter: { kind: "requests_per_minute", memberId: memberOf(call) }, need: 1n, want: times, overdraft: false },
        refuse: (resetAtMs) => rateUsedUp("requests_per_minute", rpm, resetAtMs, this.#now()),
      });
    }
    const tpm = rules.tokensPerMinute;
    if (tpm !== undefined) {
      limited.push({
        need: { counter: { kind: "tokens_per_minute", memberId: memberOf(call) }, need: tokenBound, want: tokenBound * times, overdraft: true },
        refuse: (resetAtMs) => rateUsedUp("tokens_per_minute", tpm, resetAtMs, this.#now()),
      });
    }
    return limited;
  }

  /**
   * A lease with less than half a top-up's calls left is topped up in the
   * background, so that steady traffic does not wait for the store.
   */
  #topUpAhead(needs: readonly Need[]): void {
    const low = this.#leases.runningLow(needs, BigInt(Math.max(1, Math.floor(this.#options.leaseCalls / 2))));
    if (low.length === 0 || this.#leases.inflightFor(low) !== undefined) return;
    this.#leases.topUp(low).catch((err: unknown) => this.#options.log.warn({ err }, "topping up a lease ahead of need failed"));
  }

  /**
   * Reserves every need, topping up what the leases cannot cover. A counter
   * with a top-up already running waits for it (in the first rounds);
   * otherwise this call asks itself. Only the store refuses: a counter it
   * grants nothing is over its limit. Concurrent calls of this replica may
   * take what a top-up brought before this one reserves; it then asks again,
   * for at most MAX_ROUNDS rounds.
   */
  async #reserve(limited: readonly Limited[]): Promise<{ kind: "reserved"; reservations: Reservation[] } | { kind: "refused"; rejection: Rejection }> {
    const needs = limited.map((l) => l.need);
    let lastShort: { need: Need; windowEndMs: number } | undefined;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const reservations = this.#leases.tryReserve(needs);
      if (reservations !== undefined) {
        this.#topUpAhead(needs);
        return { kind: "reserved", reservations };
      }
      const short = this.#leases.shortfalls(needs);
      // Counters with a top-up running (another call's, or one ahead of need) wait for it; the others are asked for now, together.
      const waitFor = round < WAIT_ROUNDS ? short.filter((n) => this.#leases.pending(n)) : [];
      const ask = short.filter((n) => !waitFor.includes(n));
      const [results] = await Promise.all([ask.length > 0 ? this.#leases.topUp(ask) : Promise.resolve([]), this.#leases.inflightFor(waitFor)]);
      const refused = results.find((r) => !r.granted);
      if (refused !== undefined) {
        const which = limited.find((l) => l.need === refused.need) as Limited;
        return { kind: "refused", rejection: which.refuse(refused.windowEndMs) };
      }
      const first = results[0];
      if (first !== undefined) lastShort = { need: first.need, windowEndMs: first.windowEndMs };
    }
    // Granted every time, and every time taken by this replica's other calls first: the counter is as good as used up.
    const which = limited.find((l) => l.need === lastShort?.need) ?? (limited[0] as Limited);
    return { kind: "refused", rejection: which.refuse(lastShort?.windowEndMs ?? this.#now() + 60_000) };
  }
}

/** The call's member; a caller that names none is the local member (no edge proxy). */
function memberOf(call: CallAdmission): MemberId {
  return call.memberId === "" ? LOCAL_MEMBER_ID : parseMemberId(call.memberId);
}

function usageOf(usage: CallUsage | undefined): NonNullable<StoreRequest<"settleCall">["entry"]>["usage"] {
  const n = (v: number | undefined): bigint | undefined => (v === undefined ? undefined : BigInt(v));
  return {
    inputTokens: n(usage?.inputTokens),
    outputTokens: n(usage?.outputTokens),
    cacheReadTokens: n(usage?.cacheReadTokens),
    cacheWriteTokens: n(usage?.cacheWriteTokens),
    reasoningTokens: n(usage?.reasoningTokens),
  };
}
