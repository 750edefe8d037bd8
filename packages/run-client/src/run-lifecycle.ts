/**
 * One run as a client adapter sees it on the bus, whatever the client's
 * protocol: the phase of the run, the bus subscriptions, the PreparedRun
 * publication, the status watch, the cancel grace and the one stop command the
 * owner may get.
 *
 * Phases: preparing (the adapter builds the PreparedRun; nothing on the bus)
 * -> running (subscribed, then published; a run silent for long has its
 * record read from the store, in case its terminal was lost) -> cancelling
 * (the user stopped it: cancel sent, the owner's terminal or the grace timer
 * ends it) -> ended. Any phase but ended may end directly.
 *
 * The owner gets at most one stop command: `cancel` when the user cancels a
 * running run, the adapter's StopCommand when the adapter ends a run the owner
 * is still running, and a cancel when the run is published after it already
 * ended. A run that ended by the owner's terminal gets none.
 */
import { create } from "@bufbuild/protobuf";
import { StateEventSchema, type BusNames, type ClientEvent, type FailureKind, type PreparedRun, type RunId, type RunRecord, type StateEvent } from "@byok/contracts";
import type { Logger, NatsConnection, ToolSets } from "@byok/platform";
import { openRunBus, publishCancel, publishClientClosed, publishPreparedRun, publishToolResult, type RunBus, type StateAckInit, type ToolResultInit } from "./run-bus.ts";
import type { EnsureRunStreams } from "./run-streams-once.ts";
import { RunStatusWatch } from "./run-status-watch.ts";

/** What the adapter tells an owner that still runs a run the adapter ended. */
export type StopCommand =
  /** The client went away or the user stopped it: the run ends CANCELLED. */
  | { readonly kind: "cancel"; readonly reason: string }
  /** The client side failed: the run ends FAILED with `failureKind`. */
  | { readonly kind: "client_closed"; readonly error: string; readonly failureKind: FailureKind };

export interface RunLifecycleTimeouts {
  /** Deadline of each JetStream publish (sent again within it). */
  readonly publishDeadlineMs: number;
  /** A running run silent this long has its record read from the store. */
  readonly runStatusCheckMs: number;
  /** How long a cancelled run may take to report its terminal. */
  readonly cancelGraceMs: number;
}

export interface RunLifecyclePorts {
  readonly nc: NatsConnection;
  readonly names: BusNames;
  readonly runId: RunId;
  readonly timeouts: RunLifecycleTimeouts;
  readonly ensureStreams: EnsureRunStreams;
  /** Sends the run's tool set by digest once it is stored (tool-sets.ts); without it the tools travel inline. */
  readonly toolSets?: ToolSets;
  /** The run's record; undefined while no worker has begun it (store.findRun). */
  findRun(runId: RunId): Promise<RunRecord | undefined>;
  /** The owner did not report the cancelled run's end within the grace: the adapter ends it (call `end`). */
  onCancelGraceOver(reason: string): void;
  readonly log: Logger;
}

/** What the adapter does with the run owner's messages while the run is on the bus. */
export interface RunHandlers {
  /** ClientEvents while the run has not ended (ClientEventOrder gives their order). */
  onClientEvent(event: ClientEvent): void;
  /** StateEvents (StateEventRouter); a terminal found by the status watch arrives here too. */
  onStateEvent(event: StateEvent): Promise<StateAckInit>;
}

type Phase =
  | { readonly kind: "preparing" }
  | { readonly kind: "running"; readonly statusWatch: RunStatusWatch }
  | { readonly kind: "cancelling"; readonly statusWatch: RunStatusWatch; readonly graceTimer: NodeJS.Timeout }
  | { readonly kind: "ended" };

/** What `cancel` did: the run must be ended by the caller now, or waits for its terminal. */
export type CancelEffect = "end_now" | "cancelling" | "ignored";

export class RunLifecycle {
  readonly #ports: RunLifecyclePorts;
  #phase: Phase = { kind: "preparing" };
  /** The subscriptions, once asked for (subscribeEarly or start). */
  #opening: Promise<RunBus> | undefined;
  #published = false;

  constructor(ports: RunLifecyclePorts) {
    this.#ports = ports;
  }

  /** A method, not a narrowed field read: the phase changes while start() awaits. */
  ended(): boolean {
    return this.#phase.kind === "ended";
  }

  get phase(): Phase["kind"] {
    return this.#phase.kind;
  }

  /**
   * Subscribes to the run's events and state subject, makes sure the run
   * streams exist, then publishes the run (its tool set by digest once
   * `toolSets` has it stored). "ended": the adapter ended the run
   * meanwhile (a run that got published anyway is cancelled). Throws
   * BusPublishError when the bus does not take it.
   */
  async start(run: PreparedRun, handlers: RunHandlers): Promise<"published" | "ended"> {
    const { nc, names, runId, log, timeouts } = this.#ports;
    if (this.ended()) return "ended";
    const bus = await this.#openBus(handlers);
    if (this.ended()) {
      void bus.close();
      return "ended";
    }
    await this.#ports.ensureStreams();
    if (this.ended()) {
      void bus.close();
      return "ended";
    }
    const toolSets = this.#ports.toolSets;
    const prompt = toolSets === undefined || run.prompt === undefined ? run.prompt : await toolSets.forWire(run.prompt);
    if (this.ended()) {
      void bus.close();
      return "ended";
    }
    await publishPreparedRun(nc, names, prompt === run.prompt ? run : { ...run, prompt }, timeouts.publishDeadlineMs);
    this.#published = true;
    if (this.ended()) {
      // The adapter ended the run while the publish was in flight: the run exists now, so stop it.
      this.#sendStop({ kind: "cancel", reason: "the client went away before the run started" });
      return "ended";
    }
    const statusWatch = new RunStatusWatch({
      runId,
      intervalMs: timeouts.runStatusCheckMs,
      getRun: (id) => this.#ports.findRun(id),
      // The same path as a terminal state event: idempotent if that arrives too.
      onEnded: (terminal) => void handlers.onStateEvent(create(StateEventSchema, { event: { case: "terminal", value: terminal } })),
      log,
    });
    this.#phase = { kind: "running", statusWatch };
    statusWatch.touch();
    return "published";
  }

  /**
   * Subscribes to the run's events and state subject now, while the adapter
   * still builds the PreparedRun, so that start() does not wait for the
   * subscriptions on the way to the publish. start() then uses these handlers,
   * not its own. Optional; a failure shows in start().
   */
  subscribeEarly(handlers: RunHandlers): void {
    if (this.#phase.kind !== "preparing") return;
    void this.#openBus(handlers).catch(() => undefined);
  }

  #openBus(handlers: RunHandlers): Promise<RunBus> {
    const { nc, names, runId, log } = this.#ports;
    this.#opening ??= openRunBus(
      nc,
      names,
      runId,
      {
        onClientEvent: (event) => {
          this.#touch();
          if (!this.ended()) handlers.onClientEvent(event);
        },
        onStateEvent: (event) => {
          this.#touch();
          return handlers.onStateEvent(event);
        },
      },
      log,
    );
    return this.#opening;
  }

  /**
   * The user stopped the run. Preparing: nothing is on the bus, the caller
   * ends the run now ("end_now"). Running: the owner gets a cancel and the
   * run waits for its terminal; after the grace `onCancelGraceOver` fires.
   */
  cancel(reason: string): CancelEffect {
    const phase = this.#phase;
    switch (phase.kind) {
      case "preparing":
        return "end_now";
      case "running": {
        this.#sendStop({ kind: "cancel", reason });
        const graceTimer = setTimeout(() => this.#ports.onCancelGraceOver(reason), this.#ports.timeouts.cancelGraceMs);
        graceTimer.unref();
        this.#phase = { kind: "cancelling", statusWatch: phase.statusWatch, graceTimer };
        return "cancelling";
      }
      case "cancelling":
      case "ended":
        return "ignored";
      default: {
        const unreachable: never = phase;
        throw new Error(`unknown run phase ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * Ends the run on this side, once (false when it had ended already).
   * `stop` is sent when the owner is still running the run without having been
   * told to stop; pass undefined when the run ends by the owner's terminal.
   * The bus subscriptions go once in-flight state replies are sent.
   */
  end(stop: StopCommand | undefined): boolean {
    const phase = this.#phase;
    if (phase.kind === "ended") return false;
    this.#phase = { kind: "ended" };
    let ownerRunning: boolean;
    switch (phase.kind) {
      case "preparing":
        // Nothing on the bus yet; a publish still in flight sends its own cancel.
        ownerRunning = false;
        break;
      case "running":
        phase.statusWatch.stop();
        ownerRunning = true;
        break;
      case "cancelling":
        clearTimeout(phase.graceTimer);
        phase.statusWatch.stop();
        ownerRunning = false;
        break;
      default: {
        const unreachable: never = phase;
        throw new Error(`unknown run phase ${JSON.stringify(unreachable)}`);
      }
    }
    if (ownerRunning && stop !== undefined) this.#sendStop(stop);
    // Subscriptions still opening (subscribeEarly, or start() awaiting them) close once open.
    void this.#opening?.then((bus) => bus.close(), () => undefined);
    return true;
  }

  /** True once the PreparedRun is on the work queue. */
  get published(): boolean {
    return this.#published;
  }

  /** One tool result for the owner (retried until the publish deadline). */
  publishToolResult(result: ToolResultInit): Promise<void> {
    const { nc, names, runId, timeouts } = this.#ports;
    return publishToolResult(nc, names, runId, result, timeouts.publishDeadlineMs);
  }

  #touch(): void {
    const phase = this.#phase;
    if (phase.kind === "running" || phase.kind === "cancelling") phase.statusWatch.touch();
  }

  #sendStop(stop: StopCommand): void {
    const { nc, names, runId, log, timeouts } = this.#ports;
    switch (stop.kind) {
      case "cancel":
        publishCancel(nc, names, runId, stop.reason, timeouts.publishDeadlineMs).catch((error: unknown) => log.error({ err: error }, "cancel command not published"));
        return;
      case "client_closed":
        publishClientClosed(nc, names, runId, { error: stop.error, failureKind: stop.failureKind }, timeouts.publishDeadlineMs).catch((err: unknown) =>
          log.error({ err }, "client closed command not published"),
        );
        return;
      default: {
        const unreachable: never = stop;
        throw new Error(`unknown stop command ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
