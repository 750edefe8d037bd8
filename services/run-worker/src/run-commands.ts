/**
 * The commands of one run, read from the durable RUN_COMMANDS stream with an
 * ordered consumer filtered to `names.runCommands(run_id)`, from the first
 * message on. A new owner after failover therefore sees every command again;
 * applying them is idempotent (a committed tool result is not committed twice,
 * a cancel cancels a run once).
 *
 * Cancel and ClientClosed are reported at once through `onStop`; tool results
 * queue up in arrival order for the engine. Runtime events are not applied yet
 * (no commit cause tells the client about them): they are logged and skipped.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { DeliverPolicy, type ConsumerMessages, type JetStreamClient } from "@nats-io/jetstream";
import { ClientCommandSchema, type BusNames, type ClientCommand, type FailureKind, type RunId, type ToolResult } from "@byok/contracts";
import type { Logger } from "@byok/platform";
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
  readonly js: JetStreamClient;
  readonly names: BusNames;
  readonly runId: RunId;
  readonly onStop: (command: StopCommand) => void;
  readonly log: Logger;
}

export async function openRunCommandFeed(options: RunCommandFeedOptions): Promise<RunCommandFeed> {
  const { js, names, runId, log } = options;
  const consumer = await js.consumers.get(names.commandsStream, {
    filter_subjects: names.runCommands(runId),
    deliver_policy: DeliverPolicy.All,
  });
  const messages: ConsumerMessages = await consumer.consume();
  const queue = new ToolResultQueue();

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

  const reading = (async () => {
    for await (const msg of messages) {
      let command: ClientCommand;
      try {
        command = fromBinary(ClientCommandSchema, msg.data);
      } catch (err) {
        log.warn({ err, stream_seq: msg.seq }, "ignoring an undecodable client command");
        continue;
      }
      dispatch(command);
    }
  })().catch((err: unknown) => log.error({ err }, "run command feed failed"));

  let closing: Promise<void> | undefined;
  return {
    nextToolResult: (signal) => queue.next(signal),
    close() {
      // Idempotent: the actor closes the feed after the engine and again on its way out.
      closing ??= (async () => {
        await messages.close();
        await reading;
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
