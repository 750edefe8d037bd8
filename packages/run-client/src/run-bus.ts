/**
 * A client adapter's side of the run bus (ARCHITECTURE §3.1): the ephemeral
 * event stream and the acknowledged state subject of one run, the PreparedRun
 * publication and the run's commands (JetStream publishes retried until their
 * deadline, so a NATS blip does not lose them). Foreign NATS errors are mapped
 * here, to BusPublishError. Every client adapter uses this module; none knows
 * the subjects or the retry rules itself.
 */
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { jetstream } from "@nats-io/jetstream";
import {
  ClientCommandSchema,
  decodeClientEventFrame,
  PreparedRunSchema,
  StateAckSchema,
  StateEventSchema,
  runCommandIds,
  type BusNames,
  type ClientEvent,
  type CommandId,
  type FailureKind,
  type PreparedRun,
  type RunId,
  type StateEvent,
} from "@byok/contracts";
import { BusPayloads, type Logger, type NatsConnection } from "@byok/platform";

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

/**
 * Subscribes to the run's events and serves its state subject. There is no
 * round trip (flush) to wait for: NATS handles a connection's protocol in
 * order, so the server has both subscriptions before it sees the PreparedRun
 * published after them on the same connection, and the owner publishes to
 * them only after it got that run. Rejects when the connection is closing.
 */
export async function openRunBus(nc: NatsConnection, names: BusNames, runId: RunId, handlers: RunBusHandlers, log: Logger): Promise<RunBus> {
  if (nc.isClosed() || nc.isDraining()) throw new BusPublishError(`cannot subscribe to run ${runId}: the connection is closing`);
  const events = nc.subscribe(names.runEvents(runId), {
    callback: (err, msg) => {
      if (err) return log.warn({ err }, "run event subscription error");
      let events: ClientEvent[];
      try {
        events = decodeClientEventFrame(msg.data);
      } catch (error) {
        return log.warn({ err: error }, "undecodable client events ignored");
      }
      for (const event of events) handlers.onClientEvent(event);
    },
  });

  const inFlight = new Set<Promise<void>>();
  const payloads = BusPayloads.of(nc, names);
  const state = nc.subscribe(names.runState(runId), {
    callback: (err, msg) => {
      if (err) return log.warn({ err }, "run state subscription error");
      const answered = (async () => {
        let ack: StateAckInit;
        try {
          // A state event too large for one NATS message arrives as a reference to the payload bucket.
          // An inline state event is handled without an await, in order with the run's event frames.
          const data = BusPayloads.isReference(msg) ? await payloads.incoming(msg) : msg.data;
          ack = await handlers.onStateEvent(fromBinary(StateEventSchema, data));
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

/** Longest wait for one JetStream publish acknowledgement before the publish is sent again. */
const PUBLISH_ATTEMPT_TIMEOUT_MS = 1_000;
/** Pause after an attempt that failed at once (e.g. no stream answering yet). */
const PUBLISH_RETRY_PAUSE_MS = 100;

/**
 * A JetStream publish that survives a short NATS outage: nats.js drops what was
 * buffered while the connection was down, so an attempt whose ack does not come
 * within PUBLISH_ATTEMPT_TIMEOUT_MS is sent again, until `deadlineMs` has
 * passed. The Nats-Msg-Id makes a repeat of a message the stream already has a
 * no-op. A closed connection ends the attempts at once.
 */
async function publishDurably(nc: NatsConnection, names: BusNames, subject: string, payload: Uint8Array, msgID: string, deadlineMs: number): Promise<void> {
  const js = jetstream(nc);
  const deadline = Date.now() + deadlineMs;
  // A message too large for NATS (a large tool result, images in a prompt) is stored once and referenced by every attempt.
  const payloads = BusPayloads.of(nc, names);
  const { data, headers } = await payloads.outgoing(payload);
  for (;;) {
    const remaining = deadline - Date.now();
    try {
      await js.publish(subject, data, { msgID, timeout: Math.max(1, Math.min(PUBLISH_ATTEMPT_TIMEOUT_MS, remaining)), ...(headers === undefined ? {} : { headers }) });
      return;
    } catch (error) {
      if (nc.isClosed() || deadline - Date.now() <= PUBLISH_RETRY_PAUSE_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, PUBLISH_RETRY_PAUSE_MS));
    }
  }
}

/** Publishes the run on the work queue (Nats-Msg-Id = run_id); sent again until `deadlineMs` (RUN_PUBLISH_DEADLINE_MS). */
export async function publishPreparedRun(nc: NatsConnection, names: BusNames, run: PreparedRun, deadlineMs: number): Promise<void> {
  try {
    await publishDurably(nc, names, names.runStart, toBinary(PreparedRunSchema, run), run.runId, deadlineMs);
  } catch (cause) {
    throw new BusPublishError(`cannot publish run ${run.runId}: ${(cause as Error).message}`, { cause });
  }
}

export async function publishCancel(nc: NatsConnection, names: BusNames, runId: RunId, reason: string, deadlineMs: number): Promise<void> {
  const commandId = runCommandIds.cancel(runId);
  await publishCommand(nc, names, runId, { commandId, command: { case: "cancel", value: { reason } } }, deadlineMs, "cancel");
}

/** The client side ended the run with an error (e.g. a protocol error in its messages). */
export async function publishClientClosed(
  nc: NatsConnection,
  names: BusNames,
  runId: RunId,
  closed: { error: string; failureKind: FailureKind },
  deadlineMs: number,
): Promise<void> {
  const commandId = runCommandIds.clientClosed(runId);
  await publishCommand(nc, names, runId, { commandId, command: { case: "clientClosed", value: closed } }, deadlineMs, "client closed");
}

export interface ToolResultInit {
  callId: string;
  /** Always a string: what the model sees. */
  content: string;
  isError: boolean;
}

/** One tool result for the run owner; the command id makes a repeat a no-op on the stream. */
export async function publishToolResult(nc: NatsConnection, names: BusNames, runId: RunId, result: ToolResultInit, deadlineMs: number): Promise<void> {
  const commandId = runCommandIds.toolResult(runId, result.callId);
  await publishCommand(nc, names, runId, { commandId, command: { case: "toolResult", value: result } }, deadlineMs, "tool result");
}

async function publishCommand(
  nc: NatsConnection,
  names: BusNames,
  runId: RunId,
  init: MessageInitShape<typeof ClientCommandSchema> & { commandId: CommandId },
  deadlineMs: number,
  what: string,
): Promise<void> {
  const command = create(ClientCommandSchema, init);
  try {
    await publishDurably(nc, names, names.runCommands(runId), toBinary(ClientCommandSchema, command), init.commandId, deadlineMs);
  } catch (cause) {
    throw new BusPublishError(`cannot publish ${what} for run ${runId}: ${(cause as Error).message}`, { cause });
  }
}
