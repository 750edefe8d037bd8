/**
 * The client side of the run bus, as a test double of an adapter (no Cursor):
 * publishes PreparedRuns to the RUNS work queue, records the run's UI events
 * and state events, answers state events and liveness probes with a StateAck
 * (ok by default, or whatever the test decides), runs tool rounds through a test callback and
 * sends the results and cancels as ClientCommands on the durable stream.
 *
 *   const client = await startRunClientDouble(natsUrl, names);
 *   const run = await client.start({ runId, conversationId, memberId, model, prompt, action: { case: "start", value: {...} } });
 *   const terminal = await run.terminal;
 *   await client.close();
 */
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { jetstream, type JetStreamClient } from "@nats-io/jetstream";
import {
  ClientCommandSchema,
  decodeClientEventFrame,
  PreparedRunSchema,
  StateAckSchema,
  StateEventSchema,
  parseRunId,
  runCommandIds,
  type BusNames,
  type ClientEvent,
  type ExecuteToolRound,
  type RunTerminal,
  type StateEvent,
  type ToolCallPart,
} from "@byok/contracts";
import { ensureRunStreams } from "@byok/platform";

export type StateAnswer = MessageInitShape<typeof StateAckSchema> | "no-answer";

export interface RunHooks {
  /** Answer to each state event but probes (default: ok). "no-answer" lets the request time out. May wait. */
  answer?: (event: StateEvent) => StateAnswer | Promise<StateAnswer>;
  /** Answer to each liveness probe (default: ok, at once). */
  probe?: () => StateAnswer;
  /** Tool results for an ExecuteToolRound (default: none sent). Called once per round id. */
  execute?: (round: ExecuteToolRound) => Array<{ call: ToolCallPart; content: string; isError?: boolean }> | undefined;
}

export interface ObservedRun {
  readonly runId: string;
  readonly events: ClientEvent[];
  /** State events except liveness probes. */
  readonly states: StateEvent[];
  /** Liveness probes received so far. */
  probes(): number;
  /** Resolves with the terminal state event. */
  readonly terminal: Promise<RunTerminal>;
  sendToolResult(callId: string, content: string, isError?: boolean): Promise<void>;
  cancel(reason?: string): Promise<void>;
  /** Stop answering (the client is gone: later state requests get no responders). */
  disconnect(): void;
}

export interface RunClientDouble {
  readonly nc: NatsConnection;
  start(prepared: MessageInitShape<typeof PreparedRunSchema>, hooks?: RunHooks): Promise<ObservedRun>;
  close(): Promise<void>;
}

export async function startRunClientDouble(natsUrl: string, names: BusNames): Promise<RunClientDouble> {
  const nc = await connect({ servers: natsUrl });
  await ensureRunStreams(nc, names);
  const js = jetstream(nc);
  const subscriptions: Subscription[] = [];

  return {
    nc,
    async start(init, hooks = {}) {
      const prepared = create(PreparedRunSchema, init);
      const run = observeRun(nc, js, names, prepared.runId, hooks, subscriptions);
      await nc.flush();
      await js.publish(names.runStart, toBinary(PreparedRunSchema, prepared), { msgID: prepared.runId });
      return run;
    },
    async close() {
      for (const sub of subscriptions) sub.unsubscribe();
      await nc.drain();
    },
  };
}

function observeRun(nc: NatsConnection, js: JetStreamClient, names: BusNames, runIdText: string, hooks: RunHooks, subscriptions: Subscription[]): ObservedRun {
  const runId = parseRunId(runIdText);
  const events: ClientEvent[] = [];
  const states: StateEvent[] = [];
  let probes = 0;
  const executedRounds = new Set<string>();
  let resolveTerminal: (terminal: RunTerminal) => void = () => undefined;
  const terminal = new Promise<RunTerminal>((resolve) => {
    resolveTerminal = resolve;
  });

  const sendToolResult = async (callId: string, content: string, isError = false): Promise<void> => {
    const commandId = runCommandIds.toolResult(runId, callId);
    const command = create(ClientCommandSchema, { commandId, command: { case: "toolResult", value: { callId, content, isError } } });
    await js.publish(names.runCommands(runId), toBinary(ClientCommandSchema, command), { msgID: commandId });
  };

  const eventsSub = nc.subscribe(names.runEvents(runId), {
    callback: (err, msg) => {
      if (!err) events.push(...decodeClientEventFrame(msg.data));
    },
  });
  const stateSub = nc.subscribe(names.runState(runId), {
    callback: (err, msg) => {
      if (err) return;
      const event = fromBinary(StateEventSchema, msg.data);
      if (event.event.case === "probe") {
        probes += 1;
        const answer = hooks.probe?.() ?? { ok: true };
        if (answer !== "no-answer") msg.respond(toBinary(StateAckSchema, create(StateAckSchema, answer)));
        return;
      }
      states.push(event);
      void Promise.resolve(hooks.answer?.(event) ?? { ok: true }).then((answer) => {
        if (answer !== "no-answer") msg.respond(toBinary(StateAckSchema, create(StateAckSchema, answer)));
      });
      const e = event.event;
      if (e.case === "terminal") resolveTerminal(e.value);
      if (e.case === "executeToolRound" && !executedRounds.has(e.value.roundId)) {
        executedRounds.add(e.value.roundId);
        const results = hooks.execute?.(e.value) ?? [];
        void (async () => {
          for (const r of results) await sendToolResult(r.call.callId, r.content, r.isError);
        })();
      }
    },
  });
  subscriptions.push(eventsSub, stateSub);

  return {
    runId,
    events,
    states,
    probes: () => probes,
    terminal,
    sendToolResult,
    async cancel(reason = "user pressed stop") {
      const commandId = runCommandIds.cancel(runId);
      const command = create(ClientCommandSchema, { commandId, command: { case: "cancel", value: { reason } } });
      await js.publish(names.runCommands(runId), toBinary(ClientCommandSchema, command), { msgID: commandId });
    },
    disconnect() {
      eventsSub.unsubscribe();
      stateSub.unsubscribe();
    },
  };
}
