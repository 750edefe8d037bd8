/**
 * The commands of one run, read from the durable RUN_COMMANDS stream with an
 * ephemeral pull consumer filtered to `names.runCommands(run_id)`, from the
 * first message on. A new owner after failover therefore sees every command
 * again; applying them is idempotent (a committed tool result is not committed
 * twice, a cancel cancels a run once).
 *
 * The consumer has the configuration of the library's ordered consumer (one
 * replica, in memory, no acks) but is created with one CONSUMER.CREATE request
 * (the library's ordered consumer first asks for the whole STREAM.INFO, a
 * second round trip per run), and the feed keeps the ordered consumer's
 * guarantee itself: a gap in the consumer's delivery sequence replaces the
 * consumer, starting after the last command read.
 *
 * On a JetStream cluster the consumer is a single replica on one node. When
 * that node dies the client library keeps asking the lost consumer for its
 * state and never recovers, so the feed replaces the consumer after two
 * missed heartbeats and after every reconnect of this worker's connection (the
 * library stops watching heartbeats then): the new consumer starts after the
 * last command read and is placed on a live node.
 *
 * The consumer lives as long as the feed: close() deletes it (without making
 * the run's end wait for the answer), a replaced one is deleted when it is
 * replaced, and one left behind by a worker that died is removed by the server
 * after INACTIVE_THRESHOLD_MS without a pull. Ended runs leave no consumer.
 *
 * The feed is handed out at once and its consumer is created in the
 * background (retried while JetStream refuses): nothing of the run waits for
 * it, not even the first model call. A command that arrives before the
 * consumer exists is not lost: the stream keeps it, and the consumer reads
 * from the first command of the run.
 *
 * Cancel and ClientClosed are reported at once through `onStop`; tool results
 * queue up in arrival order for the engine. Runtime events are not applied yet
 * (no commit cause tells the client about them): they are logged and skipped.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerMessages, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { nuid, type NatsConnection } from "@nats-io/transport-node";
import { ClientCommandSchema, type BusNames, type ClientCommand, type FailureKind, type RunId, type ToolResult } from "@byok/contracts";
import { onReconnect, type Logger } from "@byok/platform";
import { ABORTED } from "./abort.ts";
import { assertNever } from "./assert-never.ts";

export type StopCommand =
  | { readonly kind: "cancel"; readonly reason: string }
  | { readonly kind: "client_closed"; readonly error: string; readonly failureKind: FailureKind };

export interface RunCommandFeed {
  /** The next tool result in arrival order; ABORTED when `signal` aborts first. */
  nextToolResult(signal: AbortSignal): Promise<ToolResult | typeof ABORTED>;
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

/** How long one pull waits; the server sends heartbeats every half of it, so a lost consumer shows after about this long. */
const PULL_EXPIRES_MS = 10_000;
/** A consumer nobody pulls from for this long (its worker died) is removed by the server. */
const INACTIVE_THRESHOLD_MS = 60_000;
const NANOS_PER_MS = 1_000_000;
/** Pause between attempts to create a consumer while JetStream refuses. */
const OPEN_RETRY_MS = 1_000;

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
  const queue = new ToolResultQueue();
  let lastSeq = 0;
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

  let consumer: Consumer | undefined;
  /** Best effort: a consumer that cannot be deleted now (its node is gone) times out on the server. */
  const remove = (old: Consumer | undefined): void => {
    void old?.delete().catch((err: unknown) => log.debug({ err }, "could not delete the run's command consumer; the server removes it when inactive"));
  };
  /** The consumer's delivery sequence of the last message read (a gap means a message was lost in flight). */
  let deliverySeq = 0;
  const open = async (): Promise<ConsumerMessages> => {
    const jsm = await managerOf(js);
    const info = await jsm.consumers.add(names.commandsStream, {
      name: `${nuid.next()}_1`,
      filter_subject: names.runCommands(runId),
      ack_policy: AckPolicy.None,
      max_deliver: 1,
      num_replicas: 1,
      mem_storage: true,
      inactive_threshold: INACTIVE_THRESHOLD_MS * NANOS_PER_MS,
      ...(lastSeq === 0 ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: lastSeq + 1 }),
    });
    const created = js.consumers.getConsumerFromInfo(info);
    consumer = created;
    deliverySeq = 0;
    return created.consume({ expires: PULL_EXPIRES_MS });
  };
  /** Opens a consumer, retrying while the server refuses; undefined once the feed is closed. */
  const openUntilClosed = async (): Promise<ConsumerMessages | undefined> => {
    for (;;) {
      if (closed) return undefined;
      try {
        const opened = await open();
        if (!closed) return opened;
        // Closed while the consumer was being created: stop it (nobody reads it, so its close()
        // would never resolve); close() deletes the consumer once this loop ended.
        void opened.close();
        return undefined;
      } catch (err) {
        if (closed) return undefined;
        log.warn({ err }, "could not open a command consumer for the run; retrying");
        await Promise.race([new Promise((resolve) => setTimeout(resolve, OPEN_RETRY_MS)), closedSignal]);
      }
    }
  };

  let messages: ConsumerMessages | undefined;
  /** Resolves when the consumer of `current` may be lost: two heartbeats missed, or the connection came back. */
  const lost = (current: ConsumerMessages): Promise<void> => {
    const watched = (async () => {
      for await (const status of current.status()) {
        if (status.type === "heartbeats_missed" && status.count >= 2) return;
      }
    })();
    let unsubscribe = (): void => {};
    const reconnected = new Promise<void>((resolve) => (unsubscribe = onReconnect(nc, resolve)));
    return Promise.race([watched, reconnected]).finally(() => unsubscribe());
  };

  const reading = (async () => {
    for (;;) {
      const current = await openUntilClosed();
      if (current === undefined) return;
      messages = current;
      let replace = false;
      void lost(current).then(() => {
        if (closed || messages !== current) return;
        replace = true;
        log.warn({ last_stream_seq: lastSeq }, "the run's command consumer stopped answering; opening a new one");
        void current.close();
      });
      for await (const msg of current) {
        if (msg.info.deliverySequence !== deliverySeq + 1) {
          // The ordered consumer's rule: a message went missing on the way; read again after the last one kept.
          replace = true;
          log.warn({ last_stream_seq: lastSeq, delivery_seq: msg.info.deliverySequence, expected: deliverySeq + 1 }, "gap in the run's command deliveries; opening a new consumer");
          void current.close();
          break;
        }
        deliverySeq = msg.info.deliverySequence;
        lastSeq = msg.seq;
        let command: ClientCommand;
        try {
          command = fromBinary(ClientCommandSchema, msg.data);
        } catch (err) {
          log.warn({ err, stream_seq: msg.seq }, "ignoring an undecodable client command");
          continue;
        }
        dispatch(command);
      }
      if (closed || !replace) return;
      remove(consumer);
      consumer = undefined;
    }
  })().catch((err: unknown) => log.error({ err }, "run command feed failed"));

  let closing: Promise<void> | undefined;
  return {
    nextToolResult: (signal) => queue.next(signal),
    close() {
      // Idempotent: the actor closes the feed after the engine and again on its way out.
      closing ??= (async () => {
        closed = true;
        wakeClosed();
        await messages?.close();
        await reading;
        remove(consumer);
        consumer = undefined;
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
