/**
 * Which adapter instance handles a RunSSE or a BidiAppend, so that a load
 * balancer may send any request of a run to any instance.
 *
 * - The owner of a request id is the instance that holds its RunSSE. Before it
 *   takes a RunSSE it probes the request id: if another instance already owns
 *   it, the RunSSE gets that owner's answer (another member's request id:
 *   permission_denied; the same member: failed_precondition), exactly as a
 *   second RunSSE on one instance would.
 * - An append for a request id this instance owns goes to its own registry.
 *   Any other append is forwarded to the owner; the owner's registry orders it
 *   by append_seqno and drops duplicates, and the forwarder answers the
 *   client's BidiAppend with the owner's answer, so an append acknowledged to
 *   the client is in the owner's ordered input.
 * - No owner yet (the append came before the RunSSE reached any instance): the
 *   append waits here, at most `runWaitMs`, until an owner appears (its
 *   announcement, a RunSSE on this instance, or a retry with backoff), then is
 *   forwarded. The exception is the run_request (append_seqno 0): a client may
 *   wait for its answer before it opens the RunSSE, so once the run_request
 *   passed the synchronous checks it is acknowledged while it waits and
 *   handed to the owner when one appears. If this instance dies meanwhile, the
 *   owner's RunSSE ends with deadline_exceeded (no run_request arrived): a
 *   failed run, never a duplicated or reordered one.
 *
 * Without a PeerLink (tests of the transport alone) or for request ids that
 * cannot name a subject, everything is local, as on a single instance.
 */
import { isRunId, type RunId } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { agent } from "@byok/cursor-protocol";
import type { PeerLink, RoutedAppend, ServedRun } from "./peer-link.ts";
import type { AppendOutcome, AttachOutcome, Rejection, RunRegistry } from "./run-registry.ts";
import type { RunRequestCheck } from "./session-port.ts";

/** What happened to an append this instance sent to another one (metrics). */
export type ForwardOutcome = "accepted" | "duplicate" | "rejected" | "no_owner" | "failed";

export interface RunRouterOptions {
  registry: RunRegistry;
  /** The synchronous run_request checks (the session factory's). */
  check: (runRequest: agent.AgentRunRequest) => RunRequestCheck;
  /** The other instances; undefined = this instance is alone. */
  peers: PeerLink | undefined;
  log: Logger;
  /** Bound on waiting for an owner (the same bound the registry puts on the two halves). */
  runWaitMs: number;
  /** Appends waiting for an owner at once (default 10,000). */
  maxWaiting?: number;
  /** First retry delay while no owner answers; doubles up to 1 s (default 25 ms). */
  retryMs?: number;
  onForwarded?: (outcome: ForwardOutcome) => void;
}

/** An append as the Connect handler hands it over: the decoded message and its bytes. */
export type IncomingAppend = Omit<RoutedAppend, "requestId"> & { requestId: string };

interface Ownership {
  /** Resolves true once this instance owns the request id, false if it could not take it. */
  readonly ready: Promise<boolean>;
  served: ServedRun | undefined;
}

/** How long past `runWaitMs` a forwarder waits for the owner's answer (the owner bounds its own wait by runWaitMs). */
const ANSWER_MARGIN_MS = 5_000;
const MAX_RETRY_MS = 1_000;

export class RunRouter {
  private readonly options: Required<Omit<RunRouterOptions, "peers">> & { peers: PeerLink | undefined };
  private readonly owned = new Map<RunId, Ownership>();
  /** Appends waiting for an owner, by request id: called when one may have appeared. */
  private readonly waiting = new Map<RunId, Set<() => void>>();
  private waitingCount = 0;
  private stopped = false;

  constructor(options: RunRouterOptions) {
    this.options = { maxWaiting: 10_000, retryMs: 25, onForwarded: () => {}, ...options };
  }

  /** The registry forgot a request id: stop serving it. */
  forgotten(requestId: string): void {
    if (!isRunId(requestId)) return;
    const ownership = this.owned.get(requestId);
    if (!ownership) return;
    this.owned.delete(requestId);
    ownership.served?.stop();
  }

  async attach(requestId: string, memberId: string): Promise<AttachOutcome> {
    const { registry, peers } = this.options;
    if (!peers || !isRunId(requestId)) return registry.attach(requestId, memberId);
    if (this.stopped) return rejected("unavailable", "the gateway is shutting down");
    const existing = this.owned.get(requestId);
    if (existing) {
      // A second RunSSE here: the registry answers it as on a single instance.
      if (await existing.ready) return registry.attach(requestId, memberId);
    }
    let settle!: (owner: boolean) => void;
    const ownership: Ownership = { ready: new Promise<boolean>((resolve) => (settle = resolve)), served: undefined };
    this.owned.set(requestId, ownership);
    const giveUp = (outcome: AttachOutcome): AttachOutcome => {
      if (this.owned.get(requestId) === ownership) this.owned.delete(requestId);
      settle(false);
      this.wake(requestId);
      return outcome;
    };
    const probe = await peers.probe(requestId, memberId);
    switch (probe.kind) {
      case "no_owner":
        break;
      case "owned":
        this.options.log.info({ request_id: requestId, code: probe.rejection.code }, "RunSSE for a request id another adapter instance owns");
        return giveUp({ kind: "rejected", ...probe.rejection });
      case "failed":
        this.options.log.warn({ request_id: requestId, reason: probe.message }, "could not ask the other adapter instances about a RunSSE");
        return giveUp(rejected("unavailable", "the adapter instances could not be reached"));
      default:
        return assertNever(probe);
    }
    if (this.stopped || this.owned.get(requestId) !== ownership) return giveUp(rejected("unavailable", "the gateway is shutting down"));
    const attached = registry.attach(requestId, memberId);
    if (attached.kind === "rejected") return giveUp(attached);
    ownership.served = peers.serve(requestId, {
      append: (input) => registry.append(input),
      probe: (prober) => this.ownerAnswer(requestId, prober),
    });
    settle(true);
    this.wake(requestId);
    return attached;
  }

  async append(input: IncomingAppend): Promise<AppendOutcome> {
    const { registry, peers } = this.options;
    const requestId = input.requestId;
    const message = input.message.message;
    if (!peers || !isRunId(requestId) || (input.seqno === 0 && message.case === "prewarmRequest")) return registry.append(input);
    if (await this.ownsNow(requestId)) return registry.append(input);
    const routed: RoutedAppend = { ...input, requestId };
    if (input.seqno !== 0 || message.case !== "runRequest") return this.deliver(routed, undefined);
    const check = this.check(message.value);
    if (check.kind === "invalid") return rejected("invalid_argument", check.message);
    return new Promise<AppendOutcome>((answer) => {
      void this.deliver(routed, () => answer({ kind: "accepted" })).then((outcome) => {
        answer(outcome);
        if (outcome.kind === "rejected") {
          this.options.log.warn({ request_id: requestId, code: outcome.code, reason: outcome.message }, "a held run_request did not reach the run's owner");
        }
      });
    });
  }

  /** Stop waiting and serving; the registry ends its runs. */
  shutdown(): void {
    this.stopped = true;
    for (const wakes of this.waiting.values()) for (const wake of wakes) wake();
    for (const ownership of this.owned.values()) ownership.served?.stop();
    this.owned.clear();
    this.options.registry.shutdown();
  }

  /**
   * Forward until the owner answers, waiting for one to appear; `onHeld` is
   * called the first time no instance owns the request id.
   */
  private async deliver(append: RoutedAppend, onHeld: (() => void) | undefined): Promise<AppendOutcome> {
    const { peers, runWaitMs, registry, log } = this.options;
    if (!peers) return registry.append(append);
    if (this.waitingCount >= this.options.maxWaiting) return rejected("resource_exhausted", "too many appends are waiting for their RunSSE");
    const requestId = append.requestId;
    const deadline = Date.now() + runWaitMs;
    const wakeup = new Wakeup();
    const onOwner = (): void => wakeup.fire();
    const wakes = this.waiting.get(requestId) ?? new Set();
    wakes.add(onOwner);
    this.waiting.set(requestId, wakes);
    this.waitingCount += 1;
    const unwatch = peers.watchOwner(requestId, onOwner);
    let retryMs = this.options.retryMs;
    try {
      for (;;) {
        if (this.stopped) return rejected("unavailable", "the gateway is shutting down");
        if (await this.ownsNow(requestId)) return await registry.append(append);
        wakeup.clear();
        const result = await peers.forward(append, runWaitMs + ANSWER_MARGIN_MS);
        switch (result.kind) {
          case "answered":
            this.options.onForwarded(forwardOutcomeOf(result.outcome));
            return result.outcome;
          case "failed":
            this.options.onForwarded("failed");
            log.warn({ request_id: requestId, append_seqno: append.seqno, reason: result.message }, "could not forward an append to the run's owner");
            return rejected("unavailable", "the adapter instance holding this run could not be reached");
          case "no_owner":
            break;
          default:
            return assertNever(result);
        }
        onHeld?.();
        onHeld = undefined;
        const left = deadline - Date.now();
        if (left <= 0) {
          this.options.onForwarded("no_owner");
          return rejected("deadline_exceeded", `no RunSSE stream for this request id reached the gateway within ${runWaitMs} ms`);
        }
        await wakeup.wait(Math.min(retryMs, left));
        retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
      }
    } finally {
      unwatch();
      wakes.delete(onOwner);
      if (wakes.size === 0 && this.waiting.get(requestId) === wakes) this.waiting.delete(requestId);
      this.waitingCount -= 1;
    }
  }

  /** True once this instance owns the request id (waits while its own RunSSE is taking it). */
  private async ownsNow(requestId: RunId): Promise<boolean> {
    const ownership = this.owned.get(requestId);
    return ownership !== undefined && (await ownership.ready);
  }

  private wake(requestId: RunId): void {
    for (const wake of this.waiting.get(requestId) ?? []) wake();
  }

  private check(runRequest: agent.AgentRunRequest): RunRequestCheck {
    try {
      return this.options.check(runRequest);
    } catch (err) {
      this.options.log.error({ err }, "run_request check failed");
      return { kind: "invalid", message: "the run_request could not be checked" };
    }
  }

  /** What this owner tells another instance that received a RunSSE for one of its request ids. */
  private ownerAnswer(requestId: RunId, memberId: string): Rejection {
    const owner = this.options.registry.memberOf(requestId);
    if (owner !== undefined && owner !== memberId) return { code: "permission_denied", message: "this request id belongs to another member" };
    return { code: "failed_precondition", message: "a RunSSE stream is already open for this request id" };
  }
}

/** A wake-up call that is not lost when it comes before the wait. */
class Wakeup {
  private pending = false;
  private resolve: (() => void) | undefined;

  fire(): void {
    if (this.resolve) this.resolve();
    else this.pending = true;
  }

  clear(): void {
    this.pending = false;
  }

  /** Resolves at the next (or an unconsumed earlier) fire, or after `ms`. */
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.resolve = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.resolve = done;
    });
  }
}

function forwardOutcomeOf(outcome: AppendOutcome): ForwardOutcome {
  switch (outcome.kind) {
    case "accepted":
    case "ignored":
      return "accepted";
    case "duplicate":
      return "duplicate";
    case "rejected":
      return "rejected";
    default:
      return assertNever(outcome);
  }
}

function rejected(code: Rejection["code"], message: string): { kind: "rejected" } & Rejection {
  return { kind: "rejected", code, message };
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
