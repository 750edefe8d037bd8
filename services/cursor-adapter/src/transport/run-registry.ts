/**
 * The RunSSE/BidiAppend rendezvous: one slot per Cursor request id, created by
 * whichever half arrives first. Appends are released to the session strictly in
 * append_seqno order; the RunSSE reader gets the slot's buffered stream. Every
 * wait is bounded: a slot without a run_request, or an open run without a
 * reader, gives up after `runWaitMs`; an ended slot is forgotten after
 * `endGraceMs` (late appends in between are acknowledged and dropped).
 *
 * When a run's stream ends, its slot lets go of the session (the run's request,
 * history and checkpoint state): what the grace period needs is the request
 * id's member, its append seqnos and its stream (a reader may not have read it
 * yet). So ended runs cost a few hundred bytes each, not the run, and they are
 * bounded apart from the runs in flight (`maxEndedSlots`, the oldest forgotten
 * first), so a busy minute of ended runs never refuses a new one.
 */
import type { Logger } from "@byok/platform";
import type { agent } from "@byok/cursor-protocol";
import { AppendSequencer } from "./append-sequencer.ts";
import { BufferedServerStream } from "./buffered-server-stream.ts";
import type { ConnectCode, RunRequestCheck, RunSession, RunSessionFactory } from "./session-port.ts";

export interface RunRegistryOptions {
  factory: RunSessionFactory;
  log: Logger;
  /** Bound on waiting for the run_request (either half) and for the RunSSE reader of an open run. */
  runWaitMs: number;
  /** How long an ended request id stays known. */
  endGraceMs: number;
  /** Early appends buffered per request id while a lower seqno is missing. */
  maxEarlyAppends?: number;
  /** Request ids in flight (not ended) at once. */
  maxSlots?: number;
  /** Ended request ids kept for their grace period at once (the oldest are forgotten first). */
  maxEndedSlots?: number;
  /** Called when a request id is forgotten (its grace period passed, or shutdown). */
  onForgotten?: (requestId: string) => void;
}

export interface Rejection {
  code: ConnectCode;
  message: string;
}

export interface AppendInput {
  requestId: string;
  memberId: string;
  seqno: number;
  message: agent.AgentClientMessage;
  /** Lower-case request headers, handed to the session with the run_request. */
  headers: Readonly<Record<string, string>>;
}

export type AppendOutcome =
  | { kind: "accepted" }
  /** A seqno that was already received: acknowledged, not delivered again. */
  | { kind: "duplicate" }
  /** A prewarm_request: acknowledged, nothing started. */
  | { kind: "ignored" }
  | ({ kind: "rejected" } & Rejection);

export type DetachReason = "finished" | "disconnected";

export type AttachOutcome =
  | { kind: "attached"; stream: BufferedServerStream; detach(reason: DetachReason): void }
  | ({ kind: "rejected" } & Rejection);

type Phase =
  | { kind: "waiting"; waiters: Array<(outcome: AppendOutcome) => void> }
  | { kind: "open"; session: RunSession }
  /** The run's stream ended: late appends are acknowledged and dropped (the session is let go). */
  | { kind: "ended" }
  /** Never got a session: its RunSSE and later appends get this answer. */
  | { kind: "closed"; rejection: Rejection };

type ReaderState = "none" | "attached" | "finished" | "gone";

interface Slot {
  readonly requestId: string;
  readonly memberId: string;
  readonly log: Logger;
  readonly sequencer: AppendSequencer<{ seqno: number; message: agent.AgentClientMessage }>;
  readonly stream: BufferedServerStream;
  phase: Phase;
  reader: ReaderState;
  timer: NodeJS.Timeout | undefined;
}

export class RunRegistry {
  private readonly slots = new Map<string, Slot>();
  /** The slots whose stream ended, in the order they ended (a subset of `slots`). */
  private readonly endedSlots = new Map<string, Slot>();
  private readonly options: Required<RunRegistryOptions>;

  constructor(options: RunRegistryOptions) {
    this.options = { maxEarlyAppends: 1024, maxSlots: 10_000, maxEndedSlots: 100_000, ...options, onForgotten: options.onForgotten ?? (() => {}) };
  }

  get size(): number {
    return this.slots.size;
  }

  /** The member a known request id is bound to. */
  memberOf(requestId: string): string | undefined {
    return this.slots.get(requestId)?.memberId;
  }

  /** Runs with an open session whose stream has not ended (metrics; walks the slots). */
  activeRuns(): number {
    let count = 0;
    for (const slot of this.slots.values()) if (slot.phase.kind === "open" && !slot.stream.ended) count += 1;
    return count;
  }

  /** RunSSE readers attached now (metrics; walks the slots). */
  attachedReaders(): number {
    let count = 0;
    for (const slot of this.slots.values()) if (slot.reader === "attached") count += 1;
    return count;
  }

  async append(input: AppendInput): Promise<AppendOutcome> {
    const { message, seqno } = input;
    const first = seqno === 0;
    if (first && message.message.case === "prewarmRequest") return { kind: "ignored" };
    const existing = this.slots.get(input.requestId);
    if (existing && existing.memberId !== input.memberId) return rejected("permission_denied", "this request id belongs to another member");
    if (existing?.phase.kind === "closed") return { kind: "rejected", ...existing.phase.rejection };

    let runRequest: agent.AgentRunRequest | undefined;
    if (first) {
      if (existing && existing.sequencer.expected > 0) return { kind: "duplicate" };
      if (message.message.case !== "runRequest") return rejected("invalid_argument", "the first append (append_seqno 0) must carry a run_request");
      runRequest = message.message.value;
      const check = this.check(runRequest, existing?.log ?? this.options.log);
      if (check.kind === "invalid") {
        if (existing) this.close(existing, { code: "invalid_argument", message: check.message });
        return rejected("invalid_argument", check.message);
      }
    }

    const slot = existing ?? this.create(input.requestId, input.memberId);
    if (!slot) return rejected("resource_exhausted", "too many runs in progress");
    const offered = slot.sequencer.offer(seqno, { seqno, message });
    switch (offered.kind) {
      case "queued":
        break;
      case "duplicate":
        return { kind: "duplicate" };
      case "overflow":
        return rejected("resource_exhausted", `more than ${offered.limit} appends are waiting for append_seqno ${slot.sequencer.expected}`);
      default:
        return assertNever(offered);
    }

    if (runRequest) this.open(slot, input, runRequest);
    else this.release(slot);

    const phase: Phase = slot.phase;
    switch (phase.kind) {
      case "open":
      case "ended":
        return { kind: "accepted" };
      case "closed":
        return { kind: "rejected", ...phase.rejection };
      case "waiting":
        return new Promise<AppendOutcome>((resolve) => phase.waiters.push(resolve));
      default:
        return assertNever(phase);
    }
  }

  /** Attach the (single) RunSSE reader of a request id, creating a waiting slot if needed. */
  attach(requestId: string, memberId: string): AttachOutcome {
    const existing = this.slots.get(requestId);
    if (existing && existing.memberId !== memberId) return rejected("permission_denied", "this request id belongs to another member");
    const slot = existing ?? this.create(requestId, memberId);
    if (!slot) return rejected("resource_exhausted", "too many runs in progress");
    switch (slot.reader) {
      case "none":
        break;
      case "attached":
        return rejected("failed_precondition", "a RunSSE stream is already open for this request id");
      case "finished":
        return rejected("failed_precondition", "the RunSSE stream of this request id was already delivered");
      case "gone":
        return rejected("failed_precondition", "the RunSSE stream of this request id was closed by the client");
      default:
        return assertNever(slot.reader);
    }
    slot.reader = "attached";
    if (slot.phase.kind === "open" && !slot.stream.ended) this.clearTimer(slot);
    let detached = false;
    return {
      kind: "attached",
      stream: slot.stream,
      detach: (reason) => {
        if (detached) return;
        detached = true;
        this.detach(slot, reason);
      },
    };
  }

  /** End every run: the clients see `unavailable`, the sessions a client disconnect. */
  shutdown(): void {
    for (const slot of this.slots.values()) {
      this.clearTimer(slot);
      const phase = slot.phase;
      if (phase.kind === "waiting") {
        this.close(slot, { code: "unavailable", message: "the gateway is shutting down" });
      } else if (phase.kind === "open" && !slot.stream.ended) {
        this.notifyDisconnect(slot, phase.session);
        slot.stream.end({ kind: "error", code: "unavailable", message: "the gateway is shutting down" });
      }
      this.clearTimer(slot);
    }
    const known = [...this.slots.keys()];
    this.slots.clear();
    this.endedSlots.clear();
    for (const requestId of known) this.options.onForgotten(requestId);
  }

  private create(requestId: string, memberId: string): Slot | undefined {
    if (this.slots.size - this.endedSlots.size >= this.options.maxSlots) return undefined;
    const slot: Slot = {
      requestId,
      memberId,
      log: this.options.log.child({ request_id: requestId }),
      sequencer: new AppendSequencer(this.options.maxEarlyAppends),
      stream: new BufferedServerStream(() => this.streamEnded(slot)),
      phase: { kind: "waiting", waiters: [] },
      reader: "none",
      timer: undefined,
    };
    this.slots.set(requestId, slot);
    this.setTimer(slot, this.options.runWaitMs, () =>
      this.close(slot, { code: "deadline_exceeded", message: `no run_request arrived within ${this.options.runWaitMs} ms` }),
    );
    return slot;
  }

  private check(runRequest: agent.AgentRunRequest, log: Logger): RunRequestCheck {
    try {
      return this.options.factory.check(runRequest);
    } catch (err) {
      log.error({ err }, "run_request check failed");
      return { kind: "invalid", message: "the run_request could not be checked" };
    }
  }

  private open(slot: Slot, input: AppendInput, runRequest: agent.AgentRunRequest): void {
    if (slot.phase.kind !== "waiting") return;
    const waiters = slot.phase.waiters;
    this.clearTimer(slot);
    let session: RunSession;
    try {
      session = this.options.factory.open({
        requestId: slot.requestId,
        memberId: slot.memberId,
        headers: input.headers,
        runRequest,
        stream: slot.stream,
      });
    } catch (err) {
      slot.log.error({ err }, "could not open the run session");
      this.close(slot, { code: "internal", message: "the run could not be started" });
      return;
    }
    slot.phase = { kind: "open", session };
    slot.log.debug("run session opened");
    this.release(slot);
    for (const resolve of waiters) resolve({ kind: "accepted" });
    if (slot.reader === "none" && !slot.stream.ended) {
      this.setTimer(slot, this.options.runWaitMs, () => {
        slot.log.warn({ wait_ms: this.options.runWaitMs }, "no RunSSE stream attached; cancelling the run");
        slot.reader = "gone";
        this.notifyDisconnect(slot, session);
      });
    }
  }

  /** Deliver every append that is now in order (the run_request itself was handed to open). */
  private release(slot: Slot): void {
    if (slot.phase.kind === "ended") {
      // Late appends of an ended run: taken in order (so a repeat is still a duplicate) and dropped.
      slot.sequencer.takeReady();
      return;
    }
    if (slot.phase.kind !== "open") return;
    const session = slot.phase.session;
    for (const { seqno, message } of slot.sequencer.takeReady()) {
      if (seqno === 0) continue;
      slot.log.debug({ append_seqno: seqno, kind: message.message.case }, "append delivered");
      try {
        session.deliver(message);
      } catch (err) {
        slot.log.error({ err, append_seqno: seqno, kind: message.message.case }, "session failed to handle an append");
      }
    }
  }

  /** A slot that never got a session: fail its reader and its waiting appends. */
  private close(slot: Slot, rejection: Rejection): void {
    if (slot.phase.kind !== "waiting") return;
    const waiters = slot.phase.waiters;
    slot.phase = { kind: "closed", rejection };
    slot.log.info({ code: rejection.code, reason: rejection.message }, "run not started");
    const forAppends: Rejection =
      rejection.code === "deadline_exceeded" ? rejection : { code: "failed_precondition", message: `run not started: ${rejection.message}` };
    for (const resolve of waiters) resolve({ kind: "rejected", ...forAppends });
    slot.stream.end({ kind: "error", code: rejection.code, message: rejection.message });
  }

  private detach(slot: Slot, reason: DetachReason): void {
    if (reason === "finished") {
      slot.reader = "finished";
      return;
    }
    slot.reader = "gone";
    const phase = slot.phase;
    if (phase.kind === "waiting") this.close(slot, { code: "canceled", message: "the client closed the RunSSE stream before the run started" });
    else if (phase.kind === "open" && !slot.stream.ended) {
      slot.log.info("client closed the RunSSE stream");
      this.notifyDisconnect(slot, phase.session);
    }
  }

  private notifyDisconnect(slot: Slot, session: RunSession): void {
    try {
      session.clientDisconnected();
    } catch (err) {
      slot.log.error({ err }, "session failed to handle the client disconnect");
    }
  }

  private streamEnded(slot: Slot): void {
    if (slot.phase.kind === "open") slot.phase = { kind: "ended" };
    if (this.slots.get(slot.requestId) !== slot) return;
    this.endedSlots.set(slot.requestId, slot);
    if (this.endedSlots.size > this.options.maxEndedSlots) {
      const oldest = this.endedSlots.values().next().value;
      if (oldest !== undefined) this.forget(oldest);
    }
    this.setTimer(slot, this.options.endGraceMs, () => this.forget(slot));
  }

  private forget(slot: Slot): void {
    this.clearTimer(slot);
    if (this.slots.get(slot.requestId) !== slot) return;
    this.slots.delete(slot.requestId);
    this.endedSlots.delete(slot.requestId);
    this.options.onForgotten(slot.requestId);
  }

  private setTimer(slot: Slot, ms: number, run: () => void): void {
    this.clearTimer(slot);
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      run();
    }, ms);
    slot.timer.unref();
  }

  private clearTimer(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
  }
}

function rejected(code: ConnectCode, message: string): { kind: "rejected" } & Rejection {
  return { kind: "rejected", code, message };
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
