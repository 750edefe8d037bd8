/**
 * Every id of the bus contract and its format, in one place.
 *
 * Ids are strings (or small counters) on the wire; here each kind gets a
 * branded type, so a conversation id cannot be passed where a run id is
 * expected, and the two counts of a run's model calls (see below) cannot be
 * mixed up. A brand exists only for the type checker: at run time the value is
 * the plain string or number. Values from outside (a client request, a bus
 * message, the store) become branded through the `parse*` functions, which
 * check the format and throw InvalidIdError; ids built from other ids (model
 * call ids, round ids, command ids) are built only by the functions below.
 *
 * | id | format | made by |
 * |---|---|---|
 * | run id | the client's request id (Cursor: the RunSSE/BidiAppend request id), `[A-Za-z0-9_-]+` (a NATS subject token); for a client without request ids, `run-<32 hex>` (mintRunId) | the client adapter |
 * | conversation id | the client's conversation id, any non-empty string; for a client whose conversations its adapter names, `conv-<32 hex>` (mintConversationId) | the client, or its adapter |
 * | member id | the store's member id (member.create), or `local` without the edge proxy | the store |
 * | provider call index | 1, 2, ... per run (0 = no model call yet) | the run worker |
 * | client model call index | 0, 1, ... per run (= provider call index - 1) | the run worker (ClientEvent) |
 * | provider call id | `<run_id>:<provider call index>` (ModelRequest.call_id) | the run worker |
 * | client model call id | `<run_id>:<client model call index>` (the id a client is shown for a model call) | the client adapter |
 * | tool round id | `<run_id>:round:<provider call index>`, or `<run_id>:round:resume` | the run worker |
 * | command id | `<run_id>:cancel`, `<run_id>:closed`, `<run_id>:result:<tool call id>` | whoever sends the command |
 * | user message client id (fallback) | `user:<run_id>` | the client adapter |
 * | team id | a uuid; the default team's is DEFAULT_TEAM_ID | the store (team.create) |
 * | ledger call reference | `run:<run_id>:<provider call index>` or `request:<request id>` | the provider gateway's accounting |
 *
 * The two counts of model calls: the store and the provider gateway count a
 * run's model calls from 1 (`provider_call_index`, 0 meaning "not a model
 * call"), while ClientEvent.model_call_index counts the same calls from 0. So
 * `run-7:1` is the first call as a provider call id and the second as a client
 * model call id. Both formats are kept as they are on the wire (clients have
 * seen the client model call ids in their checkpoints); the distinct brands and
 * `clientModelCallIndexOf` keep them apart in the code.
 */

import { randomBytes } from "node:crypto";

declare const idBrand: unique symbol;

/** A `T` known to be a `B` (checked by a parse function or built by this module). */
export type Branded<T, B extends string> = T & { readonly [idBrand]: B };

export class InvalidIdError extends Error {
  override readonly name = "InvalidIdError";
}

const SUBJECT_TOKEN = /^[A-Za-z0-9_-]+$/;

// ---- Runs, conversations, members ----

/** A run: the client's request id. It becomes a NATS subject token, hence `[A-Za-z0-9_-]+`. */
export type RunId = Branded<string, "RunId">;

export function parseRunId(value: string): RunId {
  if (!SUBJECT_TOKEN.test(value)) throw new InvalidIdError(`run id ${JSON.stringify(value)} is not [A-Za-z0-9_-]+ (it becomes a bus subject token)`);
  return value as RunId;
}

export function isRunId(value: string): value is RunId {
  return SUBJECT_TOKEN.test(value);
}

/** A fresh run id for a client that has no request id of its own: `run-<32 hex>`. */
export function mintRunId(): RunId {
  return `run-${randomBytes(16).toString("hex")}` as RunId;
}

/** A conversation: the client's id for it, any non-empty string (never part of a subject). */
export type ConversationId = Branded<string, "ConversationId">;

export function parseConversationId(value: string): ConversationId {
  if (value === "") throw new InvalidIdError("conversation id is empty");
  return value as ConversationId;
}

/** A fresh conversation id for a client whose conversations its adapter names: `conv-<32 hex>`. */
export function mintConversationId(): ConversationId {
  return `conv-${randomBytes(16).toString("hex")}` as ConversationId;
}

/** A team member: the id member.create returned, or LOCAL_MEMBER_ID. */
export type MemberId = Branded<string, "MemberId">;

/** The member of every run that did not come through the edge proxy (no member authentication). */
export const LOCAL_MEMBER_ID = "local" as MemberId;

export function parseMemberId(value: string): MemberId {
  if (value === "") throw new InvalidIdError("member id is empty");
  return value as MemberId;
}

/** A team: a uuid from team.create, or DEFAULT_TEAM_ID. */
export type TeamId = Branded<string, "TeamId">;

/** The team every member belongs to unless put in another (created by the control-plane migration). */
export const DEFAULT_TEAM_ID = "00000000-0000-4000-8000-000000000001" as TeamId;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function parseTeamId(value: string): TeamId {
  if (!UUID.test(value)) throw new InvalidIdError(`team id ${JSON.stringify(value)} is not a lower-case uuid`);
  return value as TeamId;
}

// ---- Model calls: two counts of the same calls ----

/**
 * A run's model calls counted from 1 (RunRecord / run.append /
 * tool_round.create `provider_call_index`). 0 means "no model call": a run
 * that has made none yet, a store append that is not a model answer, the tool
 * round re-created from a client's staged checkpoint.
 */
export type ProviderCallIndex = Branded<number, "ProviderCallIndex">;

/** "No model call" (see ProviderCallIndex). */
export const NO_PROVIDER_CALL = 0 as ProviderCallIndex;

export function parseProviderCallIndex(value: number): ProviderCallIndex {
  if (!Number.isInteger(value) || value < 0) throw new InvalidIdError(`provider call index ${value} is not a whole number >= 0`);
  return value as ProviderCallIndex;
}

/** The call after `index` (the first call is 1). */
export function nextProviderCallIndex(index: ProviderCallIndex): ProviderCallIndex {
  return (index + 1) as ProviderCallIndex;
}

/** A run's model calls counted from 0 (ClientEvent.model_call_index): the client-facing count. */
export type ClientModelCallIndex = Branded<number, "ClientModelCallIndex">;

export function parseClientModelCallIndex(value: number): ClientModelCallIndex {
  if (!Number.isInteger(value) || value < 0) throw new InvalidIdError(`model call index ${value} is not a whole number >= 0`);
  return value as ClientModelCallIndex;
}

/** The client-facing index of model call `index` (1 -> 0, 2 -> 1, ...). */
export function clientModelCallIndexOf(index: ProviderCallIndex): ClientModelCallIndex {
  if (index < 1) throw new InvalidIdError(`provider call index ${index} names no model call`);
  return (index - 1) as ClientModelCallIndex;
}

/** ModelRequest.call_id: `<run_id>:<provider call index>` (names the invocation: cancel subject, logs). */
export type ProviderCallId = Branded<string, "ProviderCallId">;

export function providerCallId(runId: RunId, index: ProviderCallIndex): ProviderCallId {
  if (index < 1) throw new InvalidIdError(`provider call index ${index} names no model call`);
  return `${runId}:${index}` as ProviderCallId;
}

const PROVIDER_CALL_ID = /^[A-Za-z0-9_-]+:[1-9][0-9]*$/;

export function isProviderCallId(value: string): value is ProviderCallId {
  return PROVIDER_CALL_ID.test(value);
}

export function parseProviderCallId(value: string): ProviderCallId {
  if (!isProviderCallId(value)) throw new InvalidIdError(`model call id ${JSON.stringify(value)} is not <run_id>:<n>`);
  return value;
}

/** A model call as a client is shown it: `<run_id>:<client model call index>` (Cursor: a tool call's model_call_id). */
export type ClientModelCallId = Branded<string, "ClientModelCallId">;

export function clientModelCallId(runId: RunId, index: ClientModelCallIndex): ClientModelCallId {
  return `${runId}:${index}` as ClientModelCallId;
}

/**
 * A model call as the ledger names it (LedgerEntry.call_ref): a run's call
 * `run:<run_id>:<provider call index>`, or one request of an HTTP client
 * `request:<request id>`.
 */
export type LedgerCallRef = Branded<string, "LedgerCallRef">;

export function ledgerCallRef(call: { readonly runId: string; readonly callIndex: number } | { readonly requestId: string }): LedgerCallRef {
  if ("requestId" in call) {
    if (call.requestId === "") throw new InvalidIdError("request id is empty");
    return `request:${call.requestId}` as LedgerCallRef;
  }
  if (!Number.isInteger(call.callIndex) || call.callIndex < 1) throw new InvalidIdError(`provider call index ${call.callIndex} names no model call`);
  return `run:${call.runId}:${call.callIndex}` as LedgerCallRef;
}

// ---- Tool rounds ----

/** A tool round of a run (tool_round.create `round_id`, StateCommitted / ExecuteToolRound `round_id`). */
export type ToolRoundId = Branded<string, "ToolRoundId">;

/**
 * The round produced by model call `producedBy`: `<run_id>:round:<n>`; with
 * NO_PROVIDER_CALL, the round re-created from the client's staged checkpoint
 * before any model call: `<run_id>:round:resume`.
 */
export function toolRoundId(runId: RunId, producedBy: ProviderCallIndex): ToolRoundId {
  return (producedBy === NO_PROVIDER_CALL ? `${runId}:round:resume` : `${runId}:round:${producedBy}`) as ToolRoundId;
}

// ---- Commands ----

/**
 * ClientCommand.command_id, which is also the command's JetStream
 * Nats-Msg-Id: every sender of a run's cancel, client-closed or tool result
 * uses the same id for it, so a repeat (retried publish, a second sender) is a
 * no-op on the stream.
 */
export type CommandId = Branded<string, "CommandId">;

export const runCommandIds = {
  cancel: (runId: RunId): CommandId => `${runId}:cancel` as CommandId,
  clientClosed: (runId: RunId): CommandId => `${runId}:closed` as CommandId,
  toolResult: (runId: RunId, toolCallId: string): CommandId => `${runId}:result:${toolCallId}` as CommandId,
} as const;

// ---- Messages ----

/** UserMessage.client_id of a run's user message when the client sent none: `user:<run_id>`. */
export function fallbackUserMessageClientId(runId: RunId): string {
  return `user:${runId}`;
}
