/**
 * The safety net for a lost terminal state event: the run owner reports the
 * end of a run once (retried a few times), and if none of it arrives the
 * client's stream (Cursor's RunSSE, an ACP prompt request) would stay open
 * forever. While a published run
 * is silent (no state event, no client event) for `intervalMs`, the watch
 * reads the run's record from the store; a run that ended there is reported
 * through `onEnded` with the terminal the record stands for. A run still
 * running (or not begun yet, or a store that does not answer) is checked
 * again after the next silent interval.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { RunStatus, type RunId, type RunRecord, type RunTerminalSchema } from "@byok/contracts";
import type { Logger } from "@byok/platform";

export type RunTerminalInit = MessageInitShape<typeof RunTerminalSchema>;

export interface RunStatusWatchPorts {
  readonly runId: RunId;
  readonly intervalMs: number;
  /** The run's record; undefined while no worker has begun it. */
  getRun(runId: RunId): Promise<RunRecord | undefined>;
  /** The store recorded the run's end; the client session ends its stream with it. */
  onEnded(terminal: RunTerminalInit): void;
  readonly log: Logger;
}

type WatchPhase =
  /** No silent interval running (not touched yet, or a check is reading the store). */
  | { readonly kind: "idle" }
  /** The silent interval runs; a sign of life restarts it. */
  | { readonly kind: "waiting"; readonly timer: NodeJS.Timeout }
  | { readonly kind: "stopped" };

export class RunStatusWatch {
  readonly #ports: RunStatusWatchPorts;
  #phase: WatchPhase = { kind: "idle" };

  constructor(ports: RunStatusWatchPorts) {
    this.#ports = ports;
  }

  /** Starts (or restarts) the silent interval: call on every sign of life from the run owner. */
  touch(): void {
    const phase = this.#phase;
    switch (phase.kind) {
      case "idle": {
        const timer = setTimeout(() => void this.#check(), this.#ports.intervalMs);
        timer.unref();
        this.#phase = { kind: "waiting", timer };
        return;
      }
      case "waiting":
        phase.timer.refresh();
        return;
      case "stopped":
        return;
      default: {
        const unreachable: never = phase;
        throw new Error(`unknown watch phase ${JSON.stringify(unreachable)}`);
      }
    }
  }

  stop(): void {
    if (this.#phase.kind === "waiting") clearTimeout(this.#phase.timer);
    this.#phase = { kind: "stopped" };
  }

  /** A method, not a narrowed field read: stop() may come while the store is read. */
  #stopped(): boolean {
    return this.#phase.kind === "stopped";
  }

  async #check(): Promise<void> {
    if (this.#stopped()) return;
    this.#phase = { kind: "idle" };
    const { runId, log } = this.#ports;
    let record: RunRecord | undefined;
    try {
      record = await this.#ports.getRun(runId);
    } catch (error) {
      log.warn({ err: error }, "run status check failed; trying again later");
    }
    if (this.#stopped()) return;
    const terminal = record === undefined ? undefined : terminalOfRecord(record);
    if (record !== undefined && terminal !== undefined) {
      log.warn({ status: RunStatus[record.status] }, "run ended in the store without a terminal state event reaching this session");
      this.#ports.onEnded(terminal);
      return;
    }
    log.debug({ status: record === undefined ? "unknown" : RunStatus[record.status] }, "run silent but not ended");
    this.touch();
  }
}

/** The terminal a run record stands for; undefined while the run is not ended. */
export function terminalOfRecord(record: RunRecord): RunTerminalInit | undefined {
  switch (record.status) {
    case RunStatus.COMPLETED:
      return { outcome: { case: "completed", value: {} } };
    case RunStatus.CANCELLED:
      return { outcome: { case: "cancelled", value: { reason: record.failureMessage } } };
    case RunStatus.FAILED:
      return { outcome: { case: "failed", value: { kind: record.failureKind, message: record.failureMessage } } };
    case RunStatus.RUNNING:
    case RunStatus.UNSPECIFIED:
      return undefined;
    default:
      return undefined;
  }
}
