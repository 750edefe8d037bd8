/**
 * The session's side of the run bus (ARCHITECTURE §3.1): the ephemeral event
 * stream and the acknowledged state subject of one run, the PreparedRun
 * publication and the cancel command. Foreign NATS errors are mapped here.
 */
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { jetstream } from "@nats-io/jetstream";
import {
  ClientCommandSchema,
  ClientEventSchema,
  PreparedRunSchema,
  StateAckSchema,
  StateEventSchema,
  type BusNames,
  type FailureKind,
  type ClientEvent,
  type PreparedRun,
  type StateEvent,
} from "@byok/contracts";
import type { Logger, NatsConnection } from "@byok/platform";

export type StateAckInit = MessageInitShape<typeof StateAckSchema>;

export interface RunBusHandlers {
  onClientEvent(event: ClientEvent): void;
  onStateEvent(event: StateEvent): Promise<StateAckInit>;
}

export interface RunBus {
  /** Stops listening; state requests being answered are answered first. */
  close(): Promise<void>;
}

export class BusPublishError extends Error {
  override readonly name = "BusPublishError";
}

/** Subscribes to the run's events and serves its state subject; resolves once the server has both. */
export async function openRunBus(nc: NatsConnection, names: BusNames, runId: string, handlers: RunBusHandlers, log: Logger): Promise<RunBus> {
  const events = nc.subscribe(names.runEvents(runId), {
    callback: (err, msg) => {
      if (err) return log.warn({ err }, "run event subscription error");
      let event: ClientEvent;
      try {
        event = fromBinary(ClientEventSchema, msg.data);
      } catch (error) {
        return log.warn({ err: error }, "undecodable client event ignored");
      }
      handlers.onClientEvent(event);
    },
  });

  const inFlight = new Set<Promise<void>>();
  const state = nc.subscribe(names.runState(runId), {
    callback: (err, msg) => {
      if (err) return log.warn({ err }, "run state subscription error");
      const answered = (async () => {
        let ack: StateAckInit;
        try {
          ack = await handlers.onStateEvent(fromBinary(StateEventSchema, msg.data));
        } catch (error) {
          log.error({ err: error }, "state event handling failed");
          ack = { ok: false, error: error instanceof Error ? error.message : String(error) };
        }
        if (msg.reply) msg.respond(toBinary(StateAckSchema, create(StateAckSchema, ack)));
      })();
      inFlight.add(answered);
      void answered.finally(() => inFlight.delete(answered));
    },
  });

  try {
    await nc.flush();
  } catch (cause) {
    events.unsubscribe();
    state.unsubscribe();
    throw new BusPublishError(`cannot subscribe to run ${runId}: ${(cause as Error).message}`, { cause });
  }

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        try {
          events.unsubscribe();
          while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
          state.unsubscribe();
        } catch (error) {
          // The connection is closing anyway; nothing is left to clean up.
          log.debug({ err: error }, "run bus close failed");
        }
      })();
      return closing;
    },
  };
}

export async function publishPreparedRun(nc: NatsConnection, names: BusNames, run: PreparedRun, timeoutMs: number): Promise<void> {
  try {
    await jetstream(nc).publish(names.runStart, toBinary(PreparedRunSchema, run), { msgID: run.runId, timeout: timeoutMs });
  } catch (cause) {
    throw new BusPublishError(`cannot publish run ${run.runId}: ${(cause as Error).message}`, { cause });
  }
}

export function cancelCommandId(runId: string): string {
  return `${runId}:cancel`;
}

export function toolResultCommandId(runId: string, callId: string): string {
  return `${runId}:result:${callId}`;
}

export async function publishCancel(nc: NatsConnection, names: BusNames, runId: string, reason: string, timeoutMs: number): Promise<void> {
  const commandId = cancelCommandId(runId);
  await publishCommand(nc, names, runId, { commandId, command: { case: "cancel", value: { reason } } }, timeoutMs, "cancel");
}

/** The client side ended the run with an error (e.g. a protocol error in its messages). */
export async function publishClientClosed(
  nc: NatsConnection,
  names: BusNames,
  runId: string,
  closed: { error: string; failureKind: FailureKind },
  timeoutMs: number,
): Promise<void> {
  const commandId = `${runId}:closed`;
  await publishCommand(nc, names, runId, { commandId, command: { case: "clientClosed", value: closed } }, timeoutMs, "client closed");
}

export interface ToolResultInit {
  callId: string;
  /** Always a string: what the model sees. */
  content: string;
  isError: boolean;
}

/** One tool result for the run owner; the command id makes a repeat a no-op on the stream. */
export async function publishToolResult(nc: NatsConnection, names: BusNames, runId: string, result: ToolResultInit, timeoutMs: number): Promise<void> {
  const commandId = toolResultCommandId(runId, result.callId);
  await publishCommand(nc, names, runId, { commandId, command: { case: "toolResult", value: result } }, timeoutMs, "tool result");
}

async function publishCommand(
  nc: NatsConnection,
  names: BusNames,
  runId: string,
  init: MessageInitShape<typeof ClientCommandSchema> & { commandId: string },
  timeoutMs: number,
  what: string,
): Promise<void> {
  const command = create(ClientCommandSchema, init);
  try {
    await jetstream(nc).publish(names.runCommands(runId), toBinary(ClientCommandSchema, command), { msgID: init.commandId, timeout: timeoutMs });
  } catch (cause) {
    throw new BusPublishError(`cannot publish ${what} for run ${runId}: ${(cause as Error).message}`, { cause });
  }
}
