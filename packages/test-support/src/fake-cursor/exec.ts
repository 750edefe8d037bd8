/**
 * Hooks for the parts of a run where the IDE does work: exec requests
 * (client-side tools) and interaction queries (questions to the user).
 *
 * A handler gets a context per request and answers through it, at its own pace
 * and in any order relative to other execs (handlers run concurrently; a test
 * controls the order by delaying or awaiting its own promises). Typical answer:
 * `await ctx.result({ message: { case: "readResult", value: ... } }); await ctx.close();`
 * or `await ctx.reply(init)` which does both.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";

export type ExecClientMessageInit = Omit<MessageInitShape<typeof agent.ExecClientMessageSchema>, "id">;
export type InteractionResponseInit = Omit<MessageInitShape<typeof agent.InteractionResponseSchema>, "id">;

export interface ExecContext {
  readonly requestId: string;
  /** The extra headers of the run the exec belongs to (e.g. a sub-agent run's x-parent-*). */
  readonly runHeaders: Readonly<Record<string, string>>;
  readonly exec: agent.ExecServerMessage;
  /** Name of the exec's args oneof (e.g. "readArgs", "shellStreamArgs"); "unknown" when unset. */
  readonly kind: string;
  /** Aborted when the server sends exec_server_control_message{abort{id}} for this exec. */
  readonly signal: AbortSignal;
  /** One exec_client_message{id, ...} (a result, or one shell_stream event). */
  result(message: ExecClientMessageInit): Promise<void>;
  /** exec_client_control_message{stream_close{id}}. */
  close(): Promise<void>;
  /** result + close. */
  reply(message: ExecClientMessageInit): Promise<void>;
  /** exec_client_control_message{throw{id, error}}: the execution failed. */
  throw(error: string): Promise<void>;
  /** exec_client_control_message{heartbeat{id}} during a long exec. */
  heartbeat(): Promise<void>;
}

export type ExecHandler = (ctx: ExecContext) => void | Promise<void>;

/** One handler for every exec, or one per kind (key "*" = fallback). */
export type ExecHandlers = ExecHandler | Readonly<Record<string, ExecHandler>>;

export interface QueryContext {
  readonly requestId: string;
  readonly query: agent.InteractionQuery;
  readonly kind: string;
  respond(response: InteractionResponseInit): Promise<void>;
}

export type QueryHandler = (ctx: QueryContext) => void | Promise<void>;

/** The oneof case of a message's `message` field, read structurally (the Cursor protos grow exec variants over time). */
export function oneofCase(message: object): string {
  const inner = (message as { message?: { case?: unknown } }).message;
  return typeof inner?.case === "string" ? inner.case : "unknown";
}

export function pickExecHandler(handlers: ExecHandlers | undefined, kind: string): ExecHandler | undefined {
  if (handlers === undefined) return undefined;
  if (typeof handlers === "function") return handlers;
  return handlers[kind] ?? handlers["*"];
}

/** What the exec/query dispatch needs from the run. */
export interface ClientHooks {
  readonly requestId: string;
  readonly runHeaders: Readonly<Record<string, string>>;
  readonly onExec: ExecHandlers | undefined;
  readonly onQuery: QueryHandler | undefined;
  /** Sends one AgentClientMessage as the next BidiAppend of the run. */
  append(message: agent.AgentClientMessage, label: string): Promise<void>;
  violation(text: string): void;
}

/**
 * Hands an exec_server_message to its handler (concurrently with other execs).
 * Returns the controller the run aborts on exec_server_control_message{abort{id}}.
 * Without a handler the exec is answered with `throw` and reported.
 */
export function startExec(exec: agent.ExecServerMessage, hooks: ClientHooks): AbortController {
  const kind = oneofCase(exec);
  const abort = new AbortController();
  const control = (message: MessageInitShape<typeof agent.ExecClientControlMessageSchema>["message"], label: string): Promise<void> =>
    hooks.append(create(agent.AgentClientMessageSchema, { message: { case: "execClientControlMessage", value: { message } } }), label);
  const ctx: ExecContext = {
    requestId: hooks.requestId,
    runHeaders: hooks.runHeaders,
    exec,
    kind,
    signal: abort.signal,
    result: (init) => {
      const value = create(agent.ExecClientMessageSchema, init as MessageInitShape<typeof agent.ExecClientMessageSchema>);
      value.id = exec.id;
      return hooks.append(create(agent.AgentClientMessageSchema, { message: { case: "execClientMessage", value } }), `exec_result#${exec.id}`);
    },
    close: () => control({ case: "streamClose", value: { id: exec.id } }, `exec_close#${exec.id}`),
    reply: async (init) => {
      await ctx.result(init);
      await ctx.close();
    },
    throw: (error) => control({ case: "throw", value: { id: exec.id, error } }, `exec_throw#${exec.id}`),
    heartbeat: () => control({ case: "heartbeat", value: { id: exec.id } }, `exec_heartbeat#${exec.id}`),
  };
  const handler = pickExecHandler(hooks.onExec, kind);
  if (handler === undefined) {
    hooks.violation(`exec#${exec.id} (${kind}) arrived but the test has no handler for it`);
    void ctx.throw(`the fake client has no handler for ${kind}`);
    return abort;
  }
  void Promise.resolve()
    .then(() => handler(ctx))
    .catch((err: unknown) => hooks.violation(`exec handler for #${exec.id} (${kind}) threw: ${(err as Error).message}`));
  return abort;
}

/** Hands an interaction_query to the test's handler; without one it is answered empty and reported. */
export function startQuery(query: agent.InteractionQuery, hooks: ClientHooks): void {
  const kind = oneofCase(query);
  const respond = (init: InteractionResponseInit): Promise<void> => {
    const value = create(agent.InteractionResponseSchema, init as MessageInitShape<typeof agent.InteractionResponseSchema>);
    value.id = query.id;
    return hooks.append(create(agent.AgentClientMessageSchema, { message: { case: "interactionResponse", value } }), `query_response#${query.id}`);
  };
  if (hooks.onQuery === undefined) {
    hooks.violation(`interaction query #${query.id} (${kind}) arrived but the test has no handler for it`);
    void respond({});
    return;
  }
  const handler = hooks.onQuery;
  void Promise.resolve()
    .then(() => handler({ requestId: hooks.requestId, query, kind, respond }))
    .catch((err: unknown) => hooks.violation(`query handler for #${query.id} threw: ${(err as Error).message}`));
}
