/**
 * The wire half of client-side tools for one Cursor request: numeric exec and
 * interaction-query ids (allocated here, mapped to the tool call they serve),
 * the exec/query frames, and the client's answers routed back to the call
 * (cursor-agent-protocol §7, §8). The ids never leave the adapter.
 *
 * Anything the client sends that does not fit the lifecycle (an id that is
 * absent, unknown or already answered, a result of the wrong kind, a second
 * close) is reported once through `protocolError` and never reaches the call;
 * answers for execs aborted on cancel/failure are dropped. Gateway-side work
 * (after an approval, or a server-local tool that reads stored state) runs
 * here too, so stopping the wire aborts it and drops its outcome.
 */
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { ExecIdRegistry } from "../tools/exec-ids.ts";
import type { ExecCall, ExecProgress, ExecStep, InteractionProgress, InteractionQueryPayload, InteractionReply, ToolOutcome } from "../tools/types.ts";

export interface ExecWirePorts {
  send(message: agent.AgentServerMessage): void;
  /** The client broke the exec/query protocol: the run ends with a protocol error. */
  protocolError(message: string): void;
  /** Gateway-side work threw instead of resolving to an outcome (a bug): the run ends. */
  workFailed(error: unknown): void;
  log: Logger;
}

/** What a call hears back: execution output or its outcome (protocol errors and next steps are handled here). */
export type WireProgress = Extract<ExecProgress, { kind: "waiting" | "done" }>;

interface ExecEntry {
  exec: ExecCall;
  onProgress(progress: WireProgress): void;
}

interface QueryEntry {
  onResponse(reply: InteractionReply): InteractionProgress;
  onProgress(progress: WireProgress): void;
}

export class ExecWire {
  readonly #ports: ExecWirePorts;
  readonly #execIds = new ExecIdRegistry("exec");
  readonly #queryIds = new ExecIdRegistry("interaction query");
  readonly #execs = new Map<number, ExecEntry>();
  readonly #queries = new Map<number, QueryEntry>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #work = new AbortController();
  #stopped = false;

  constructor(ports: ExecWirePorts) {
    this.#ports = ports;
  }

  /** Sends the exec's first request; `callId` labels the ids it uses. */
  startExec(callId: string, exec: ExecCall, onProgress: (progress: WireProgress) => void): void {
    this.#sendStep(callId, exec.first, { exec, onProgress });
  }

  startQuery(callId: string, query: InteractionQueryPayload, onResponse: QueryEntry["onResponse"], onProgress: (progress: WireProgress) => void): void {
    if (this.#stopped) return;
    const id = this.#queryIds.allocate(callId);
    this.#queries.set(id, { onResponse, onProgress });
    this.#ports.send(create(agent.AgentServerMessageSchema, { message: { case: "interactionQuery", value: { id, query } } }));
  }

  /**
   * Gateway-side work for a call: its outcome is reported as done, unless the
   * wire stopped meanwhile (then `signal` aborts and the outcome is dropped).
   */
  runWork(work: (signal: AbortSignal) => ToolOutcome | Promise<ToolOutcome>, onProgress: (progress: WireProgress) => void): void {
    if (this.#stopped) return;
    const signal = this.#work.signal;
    Promise.resolve()
      .then(() => work(signal))
      .then(
        (outcome) => {
          if (!this.#stopped) onProgress({ kind: "done", outcome });
        },
        (error: unknown) => {
          if (!this.#stopped) this.#ports.workFailed(error);
        },
      );
  }

  /** Runs `work` after `delayMs` unless the wire stopped meanwhile. */
  later(delayMs: number, work: () => void): void {
    if (this.#stopped) return;
    if (delayMs <= 0) return work();
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#stopped) work();
    }, delayMs);
    this.#timers.add(timer);
  }

  onExecMessage(message: agent.ExecClientMessage): void {
    const found = this.#execIds.lookup(message.id);
    switch (found.kind) {
      case "protocol_error":
        return this.#ports.protocolError(found.message);
      case "late":
        return this.#ports.log.debug({ exec_id: message.id }, "answer for an aborted exec dropped");
      case "active":
        break;
      default: {
        const unreachable: never = found;
        throw new Error(`unknown exec lookup ${String(unreachable)}`);
      }
    }
    const entry = this.#execs.get(message.id);
    if (entry === undefined) throw new Error(`exec ${message.id} is running but has no call`);
    this.#handle(message.id, found.callId, entry, entry.exec.onReply(message.message));
  }

  onExecControl(message: agent.ExecClientControlMessage): void {
    const m = message.message;
    switch (m.case) {
      case "streamClose": {
        const closed = this.#execIds.close(m.value.id);
        switch (closed.kind) {
          case "closed":
            this.#execs.delete(m.value.id);
            return;
          case "closed_without_result": {
            const entry = this.#execs.get(m.value.id);
            if (entry !== undefined) this.#handle(m.value.id, closed.callId, entry, entry.exec.onClosedWithoutResult());
            return;
          }
          case "late":
            return;
          case "protocol_error":
            return this.#ports.protocolError(closed.message);
          default: {
            const unreachable: never = closed;
            throw new Error(`unknown close lookup ${String(unreachable)}`);
          }
        }
      }
      case "throw": {
        const found = this.#execIds.lookup(m.value.id);
        if (found.kind === "protocol_error") return this.#ports.protocolError(found.message);
        if (found.kind === "late") return;
        const entry = this.#execs.get(m.value.id);
        if (entry !== undefined) this.#handle(m.value.id, found.callId, entry, entry.exec.onThrow(m.value.error));
        return;
      }
      case "heartbeat":
      case undefined:
        return;
      default: {
        const unreachable: never = m;
        this.#ports.log.warn({ control: String(unreachable) }, "unknown exec control message ignored");
      }
    }
  }

  onInteractionResponse(message: agent.InteractionResponse): void {
    const found = this.#queryIds.lookup(message.id);
    if (found.kind === "protocol_error") return this.#ports.protocolError(found.message);
    if (found.kind === "late") return;
    const entry = this.#queries.get(message.id);
    if (entry === undefined) throw new Error(`interaction query ${message.id} is open but has no call`);
    const progress = entry.onResponse(message.result);
    if (progress.kind === "protocol_error") return this.#ports.protocolError(progress.message);
    this.#queryIds.settle(message.id);
    this.#queries.delete(message.id);
    switch (progress.kind) {
      case "done":
        entry.onProgress({ kind: "done", outcome: progress.outcome });
        return;
      case "work":
        this.runWork((signal) => progress.run(signal), entry.onProgress);
        return;
      default: {
        const unreachable: never = progress;
        throw new Error(`unknown interaction progress ${String(unreachable)}`);
      }
    }
  }

  /**
   * Stops everything: pending timers are dropped, every exec still waiting for
   * its terminal result gets exec_server_control_message{abort{id}}, and later
   * answers for them are ignored. Returns the aborted exec ids.
   */
  abortRunning(): number[] {
    this.#stopped = true;
    this.#work.abort();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#queryIds.abortRunning();
    const aborted = this.#execIds.abortRunning();
    for (const id of aborted) {
      this.#ports.send(create(agent.AgentServerMessageSchema, { message: { case: "execServerControlMessage", value: { message: { case: "abort", value: { id } } } } }));
    }
    return aborted;
  }

  #sendStep(callId: string, step: ExecStep, entry: ExecEntry): void {
    this.later(step.delayMs, () => {
      const id = this.#execIds.allocate(callId);
      this.#execs.set(id, entry);
      this.#ports.send(
        create(agent.AgentServerMessageSchema, { message: { case: "execServerMessage", value: { id, execId: callId, message: step.request } } }),
      );
    });
  }

  #handle(id: number, callId: string, entry: ExecEntry, progress: ExecProgress): void {
    switch (progress.kind) {
      case "waiting":
        if (progress.delta !== undefined) entry.onProgress(progress);
        return;
      case "next":
        this.#execIds.settle(id);
        this.#sendStep(callId, progress.step, entry);
        return;
      case "done":
        this.#execIds.settle(id);
        entry.onProgress(progress);
        return;
      case "protocol_error":
        this.#ports.protocolError(progress.message);
        return;
      default: {
        const unreachable: never = progress;
        throw new Error(`unknown exec progress ${String(unreachable)}`);
      }
    }
  }
}
