/**
 * The one place a ModelRequest is built: frozen PromptSpec + ModelSpec of the
 * run + the run's history, in store order. Deterministic by construction: no
 * clocks, ids or per-call data go into model input, so call n's messages are a
 * prefix of call n+1's (design/ARCHITECTURE.md §5.2). The call id only names
 * the invocation (cancel subject, idempotency key) and the client kind names
 * who the call is accounted to (the ledger); neither is model input.
 */
import { create } from "@bufbuild/protobuf";
import { promptForWire } from "@byok/platform";
import { ModelRequestSchema, providerCallId, type HistoryBase, type Message, type RunClientKind, type ModelRequest, type ModelSpec, type PreparedRun, type PromptSpec, type ProviderCallIndex, type RunId } from "@byok/contracts";

export interface RunModelContext {
  readonly runId: RunId;
  readonly conversationId: string;
  readonly memberId: string;
  readonly model: ModelSpec | undefined;
  readonly prompt: PromptSpec | undefined;
  readonly clientKind: RunClientKind;
}

/** The run's part of every model request, from its PreparedRun. */
export function runModelContext(runId: RunId, prepared: PreparedRun): RunModelContext {
  return {
    runId,
    conversationId: prepared.conversationId,
    memberId: prepared.memberId,
    model: prepared.model,
    prompt: prepared.prompt,
    clientKind: prepared.clientKind,
  };
}

export function buildModelRequest(run: RunModelContext, history: readonly Message[], providerCallIndex: ProviderCallIndex): ModelRequest {
  return create(ModelRequestSchema, {
    callId: providerCallId(run.runId, providerCallIndex),
    runId: run.runId,
    conversationId: run.conversationId,
    memberId: run.memberId,
    ...(run.model === undefined ? {} : { spec: run.model }),
    // The tool set by digest when the run named a stored one: the gateway resolves it (tool-sets.ts).
    ...(run.prompt === undefined ? {} : { prompt: promptForWire(run.prompt) }),
    messages: [...history],
    clientKind: run.clientKind,
  });
}

/**
 * `request` as it goes on the bus when the gateway holds the history of `base`: only the messages after
 * it travel. `historyRevisionId` names the revision whose whole history the request's messages are.
 */
export function requestOnWire(request: ModelRequest, base: HistoryBase | undefined, historyRevisionId: string): ModelRequest {
  // A copy of every field (a field added to ModelRequest travels too), with the history's part replaced.
  const wire: ModelRequest = { ...request, messages: base === undefined ? request.messages : request.messages.slice(base.messageCount), historyRevisionId };
  if (base === undefined) delete wire.historyBase;
  else wire.historyBase = base;
  return wire;
}
