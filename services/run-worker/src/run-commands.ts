/**
 * The commands of one run: a core NATS subscription on
 * `names.runCommands(run_id)` for what arrives while the run is open, and a
 * read of the durable RUN_COMMANDS stream for what is stored already. A new
 * owner after failover therefore sees every command again; applying them is
 * idempotent (a committed tool result is not committed twice, a cancel
 * cancels a run once), and the feed applies each command id once.
 *
 * Only what the stream stored is applied, in the stream's order: a command
 * the publisher was never acked for is never acted on, as with a consumer.
 * The feed subscribes to the subject and reads the stream for it
 * (STREAM.MSG.GET with next_by_subj, from where the last read ended; the
 * stream's leader answers, so no lagging replica hides a stored command).
 * The subscription is a doorbell: a published command reaches it (possibly
 * before the stream has stored it), and the feed reads the stream again,
 * and again after a short pause while the announced command id is not
 * there yet. The stream is also read after every reconnect of the worker's
 * connection (a command published while it was away rang no bell) and every
 * RESCAN_MS while the run stays open (on a cluster, a subscription made on
 * one server reaches the others a moment later). Each command id is applied
 * once.
 *
 * Before, each run created a JetStream consumer for this, pulled from it and
 * deleted it: three JetStream API requests and heartbeats every few seconds
 * per open run, for the rare run that gets a command at all. A subscription
 * and one message read cost a fraction of that (docs/performance.md).
 *
 * The feed is handed out at once and reads the stream in the background
 * (retried while JetStream refuses): nothing of the run waits for it, not even
 * the first model call. Closed, it leaves nothing on the server: the
 * subscription goes, no consumer was made.
 *
 * Cancel and ClientClosed are reported at once through `onStop`; tool results
 * queue up in arrival order for the engine. Runtime events are not applied yet
 * (no commit cause tells the client about them): they are logged and skipped.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { PubHeaders, type JetStreamClient, type JetStreamManager, type StoredMsg } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { ClientCommandSchema, runCommandIds, type BusNames, type ClientCommand, type FailureKind, type RunId, type ToolResult } from "@byok/contracts";
import { BusPayloads, onReconnect, PayloadFailure, type Logger } from "@byok/platform";
import { ABORTED } from "./abort.ts";
import { assertNever } from "./assert-never.ts";

export type StopCommand =
  | { readonly kind: "cancel"; readonly reason: string }
  | { readonly kind: "client_closed"; readonly error: string; readonly failureKind: FailureKind };

/**
 * Publishes a cancel to another run's commands (a run this one superseded: the store already marked
 * it cancelled, its owner learns it now). Under the run's one cancel id, so a repeat is stored once.
 */
export function sendCancel(js: JetStreamClient, names: BusNames, runId: RunId, reason: string): Promise<unknown> {
  const commandId = runCommandIds.cancel(runId);
  const command = create(ClientCommandSchema, { commandId, command: { case: "cancel", value: { reason } } });
  return js.publish(names.runCommands(runId), toBinary(ClientCommandSchema, command), { msgID: commandId });
}

export interface RunCommandFeed {
  /** The next tool result in arrival order; ABORTED when `signal` aborts first. */
  nextToolResult(signal: AbortSignal): Promise<ToolResult | typeof ABORTED>;
  /**
   * Reads what the stream holds now and applies it (a stop command reaches
   * onStop before this resolves); gives up silently after `timeoutMs`.
   */
  readNow(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface RunCommandFeedOptions {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly names: BusNames;
  readonly runId: RunId;
  readonly onStop: (command: StopCommand) => void;
  readonly log: Logger;
}

/** While a run stays open, its stored commands are read again this often. */
const RESCAN_MS = 10_000;
/** Pause between attempts to read the stream while JetStream refuses. */
const READ_RETRY_MS = 1_000;
/** First pause before reading again for an announced command the stream had not stored yet (doubling up to READ_RETRY_MS). */
const NOT_STORED_FIRST_PAUSE_MS = 5;

/** One manager per JetStream client, without the account-info request a new manager makes. */
const managers = new WeakMap<JetStreamClient, Promise<JetStreamManager>>();
function managerOf(js: JetStreamClient): Promise<JetStreamManager> {
  let manager = managers.get(js);
  if (manager === undefined) {
    manager = js.jetstreamManager(false);
    managers.set(js, manager);
  }
  return manager;
}

export function openRunCommandFeed(options: RunCommandFeedOptions): RunCommandFeed {
  const { nc, js, names, runId, log } = options;
  const subject = names.runCommands(runId);
  const queue = new ToolResultQueue();
  /** Command ids applied (the stream read and the subscription may both see one). */
  const applied = new Set<string>();
  let closed = false;
  let wakeClosed: () => void = () => {};
  const closedSignal = new Promise<void>((resolve) => (wakeClosed = resolve));

  const dispatch = (command: ClientCommand): void => {
    const c = command.command;
    switch (c.case) {
      case "toolResult":
        queue.push(c.value);
        return;
      case "runtimeEvent":
        log.warn({ command_id: command.commandId, event_id: c.value.eventId }, "runtime events are not supported yet; ignored");
        return;
      case "cancel":
        options.onStop({ kind: "cancel", reason: c.value.reason });
        return;
      case "clientClosed":
        options.onStop({ kind: "client_closed", error: c.value.error, failureKind: c.value.failureKind });
        return;
      case undefined:
        log.warn({ command_id: command.commandId }, "ignoring a client command without payload");
        return;
      default:
        assertNever(c, "client command");
    }
  };

  const decode = (data: Uint8Array): ClientCommand | undefined => {
    try {
      return fromBinary(ClientCommandSchema, data);
    } catch (err) {
      log.warn({ err }, "ignoring an undecodable client command");
      return undefined;
    }
  };
  /** Applies a command read from the stream, once per command id. */
  const apply = (data: Uint8Array): void => {
    const command = decode(data);
    if (closed || command === undefined) return;
    rung.delete(command.commandId);
    if (command.commandId !== "") {
      if (applied.has(command.commandId)) return;
      applied.add(command.commandId);
    }
    dispatch(command);
  };

  /** Command ids the subscription announced that no read has found yet (not stored yet: read again shortly). */
  const rung = new Set<string>();
  const subscription = nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err !== null) {
        log.warn({ err }, "run command subscription error");
        return;
      }
      // A command too large for one NATS message names its payload; its id is its message id (publishDurably).
      const commandId = BusPayloads.isReference(msg) ? msg.headers?.get(PubHeaders.MsgIdHdr) : decode(msg.data)?.commandId;
      if (commandId === undefined || applied.has(commandId)) return;
      rung.add(commandId);
      void read();
    },
  });

  const payloads = BusPayloads.of(nc, names);
  const storedData = async (stored: StoredMsg): Promise<Uint8Array | undefined> => {
    try {
      return await payloads.incoming({ data: stored.data, headers: stored.header }, { keep: true });
    } catch (err) {
      if (!(err instanceof PayloadFailure) || err.kind !== "missing") throw err;
      log.error({ err, stream_seq: stored.seq }, "skipping a run command whose payload is gone");
      return undefined;
    }
  };
  /** The stream sequence the last read ended at: the next read starts after it. */
  let readTo = 0;
  const readStored = async (): Promise<void> => {
    const jsm = await managerOf(js);
    for (;;) {
      if (closed) return;
      // next_by_subj is not in the library's MsgRequest type; the server (2.9+) answers it on STREAM.MSG.GET.
      const stored = await jsm.streams.getMessage(names.commandsStream, { next_by_subj: subject, seq: readTo + 1 } as unknown as { seq: number });
      if (stored === null) return;
      // A stored payload stays for later reads; one that is gone (older than the stream's age limit) is skipped.
      const data = await storedData(stored);
      readTo = stored.seq;
      if (data !== undefined) apply(data);
    }
  };
  const pause = (ms: number): Promise<unknown> => Promise.race([new Promise((resolve) => setTimeout(resolve, ms)), closedSignal]);
  /** Reads what the stream holds, retrying while JetStream refuses, and again while an announced command is not stored yet. */
  const catchUp = async (): Promise<void> => {
    let notStoredPauseMs = NOT_STORED_FIRST_PAUSE_MS;
    for (;;) {
      if (closed) return;
      try {
        await readStored();
      } catch (err) {
        if (closed) return;
        log.warn({ err }, "could not read the run's stored commands; retrying");
        await pause(READ_RETRY_MS);
        continue;
      }
      if (rung.size === 0) return;
      await pause(notStoredPauseMs);
      notStoredPauseMs = Math.min(notStoredPauseMs * 2, READ_RETRY_MS);
    }
  };
  /** One read at a time; a read asked for while one runs follows it, and the promise covers both. */
  let reading: Promise<void> | undefined;
  let readAgain = false;
  const read = (): Promise<void> => {
    if (reading !== undefined) {
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      do {
        readAgain = false;
        await catchUp();
      } while (readAgain && !closed);
      reading = undefined;
    })().catch((err: unknown) => {
      reading = undefined;
      log.error({ err }, "run command feed failed");
    });
    return reading;
  };

  void read();
  const stopWatchingReconnects = onReconnect(nc, () => void read());
  const rescan = setInterval(() => void read(), RESCAN_MS);
  rescan.unref();

  let closing: Promise<void> | undefined;
  return {
    nextToolResult: (signal) => queue.next(signal),
    async readNow(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      try {
        await Promise.race([read(), gaveUp, closedSignal]);
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      // Idempotent: the actor closes the feed after the engine and again on its way out.
      closing ??= (async () => {
        closed = true;
        wakeClosed();
        clearInterval(rescan);
        stopWatchingReconnects();
        // A read still in flight finishes on its own (a JetStream request that times out at worst) and applies nothing now.
        subscription.unsubscribe();
      })();
      return closing;
    },
  };
}

/** Tool results in arrival order, handed to one waiting reader at a time. */
class ToolResultQueue {
  readonly #items: ToolResult[] = [];
  #waiter: ((item: ToolResult) => void) | undefined;

  push(item: ToolResult): void {
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter(item);
      return;
    }
    this.#items.push(item);
  }

  next(signal: AbortSignal): Promise<ToolResult | typeof ABORTED> {
    const item = this.#items.shift();
    if (item !== undefined) return Promise.resolve(item);
    if (signal.aborted) return Promise.resolve(ABORTED);
    if (this.#waiter) throw new Error("ToolResultQueue supports one reader at a time");
    return new Promise((resolve) => {
      const onAbort = (): void => {
        this.#waiter = undefined;
        resolve(ABORTED);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiter = (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      };
    });
  }
}
