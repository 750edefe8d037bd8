/**
 * One Cursor run (one request id): prepares and publishes the PreparedRun,
 * turns the run owner's events into frames, runs its tool rounds on the client
 * (exec / interaction wire ids stay here), projects its commits into
 * checkpoints, relays cancel, and ends the Cursor stream exactly once (running
 * execs are aborted before an error end).
 *
 * Lifecycle: the shared RunLifecycle of @byok/run-client keeps the phase
 * (preparing: history import, blob SETs, subscriptions, nothing on the bus
 * yet -> running: PreparedRun published, status watch -> cancelling: cancel
 * sent, waiting for the owner's terminal at most CANCEL_GRACE_MS -> ended:
 * EndStream written, bus subscriptions torn down once in-flight state replies
 * are sent) and the rule that the owner gets at most one stop command (cancel
 * or client closed). This session decides which: a run ended for a reason of
 * this side with an error gets client closed with the failure's kind, any
 * other end a cancel.
 */
import { clientModelCallId, FailureKind, isRunId, parseConversationId, parseMemberId, type ClientEvent, type RunId } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { RunLifecycle, type RunHandlers, type StopCommand } from "@byok/run-client";
import { prefetchedBlobs } from "../checkpoint/blob-fetch.ts";
import { ClientBlobs } from "../checkpoint/client-blobs.ts";
import { ConversationProjection } from "../checkpoint/conversation-projection.ts";
import { KvChannel } from "../checkpoint/kv-channel.ts";
import { RootSaves } from "../checkpoint/root-saves.ts";
import { EventFrames } from "../interaction/event-frames.ts";
import { prepareRun, type RunPlan } from "../request/prepare-run.ts";
import type { EndOutcome, RunOpenContext, RunSession } from "../transport/session-port.ts";
import type { SessionServices } from "./session-services.ts";
import { afterFramesWritten } from "./after-frames-written.ts";
import { ExecWire } from "./exec-wire.ts";
import { cancelledOutcome, closeKindOf, endOutcomeOf, sessionFailureOf, type SessionFailure } from "./failures.ts";
import { StateHandler } from "./state-handler.ts";
import { ToolRoundCommits } from "./tool-round-commits.ts";
import { ToolRoundDriver } from "./tool-round-driver.ts";

/** How long a cancelled run may take to report its terminal before the stream ends anyway. */
export const CANCEL_GRACE_MS = 1_500;

export function openRunSession(services: SessionServices, context: RunOpenContext): RunSession {
  if (!isRunId(context.requestId)) {
    return refusedRun(context, { kind: "invalid_request", message: `request id ${JSON.stringify(context.requestId)} cannot be used as a run id` });
  }
  const session = new CursorRunSession(services, context, context.requestId);
  session.start();
  return session;
}

/** A request that cannot become a run: its stream ends at once, nothing reaches the bus. */
function refusedRun(context: RunOpenContext, failure: SessionFailure): RunSession {
  queueMicrotask(() => context.stream.end(endOutcomeOf(failure)));
  return { deliver: () => undefined, clientDisconnected: () => undefined };
}

/** Why the stream ends: the owner's terminal, or a reason of this side (the owner is then told to stop). */
type Ending = { readonly by: "terminal" } | { readonly by: "session"; readonly closeKind: FailureKind };

class CursorRunSession implements RunSession {
  readonly #services: SessionServices;
  readonly #context: RunOpenContext;
  readonly #runId: RunId;
  /** Set once the run is prepared; state events only come after its publish. */
  #stateHandler: StateHandler | undefined;
  readonly #log: Logger;
  readonly #kv: KvChannel;
  readonly #blobs: ClientBlobs;
  readonly #frames: EventFrames;
  readonly #wire: ExecWire;
  readonly #lifecycle: RunLifecycle;
  #plan: RunPlan | undefined;
  /** Set once the run is prepared (client events only come after its publish). */
  #projection: ConversationProjection | undefined;
  /**
   * Resolved once the owner's first event (client or state) for the run has
   * gone to the client. The blobs the first checkpoint needs (system root,
   * user message, initial roots) are SET and saved in the store from then on:
   * only that checkpoint waits for them, so their KV round trips and store
   * write stay off the path to the first model call and to the first output,
   * which share the cores with them.
   */
  #firstOutputCame!: () => void;
  readonly #firstOutput = new Promise<void>((resolve) => (this.#firstOutputCame = resolve));
  #outputSeen = false;
  /** Commits received so far: a response prepared after its commit came would only repeat the commit's SETs. */
  #commits = 0;

  constructor(services: SessionServices, context: RunOpenContext, runId: RunId) {
    this.#services = services;
    this.#context = context;
    this.#runId = runId;
    const { deps } = services;
    this.#log = deps.log.child({ run_id: runId, request_id: context.requestId, conversation_id: context.runRequest.conversationId ?? "" });
    const send = (message: agent.AgentServerMessage) => context.stream.send(message);
    this.#kv = new KvChannel({
      send,
      log: this.#log,
      setTimeoutMs: deps.timeouts.blobAckMs,
      getTimeoutMs: deps.timeouts.kvGetMs,
      onRoundTrip: (op, outcome, sentAt) => deps.metrics.kvRoundTrip(op, outcome, sentAt),
    });
    this.#blobs = new ClientBlobs(this.#kv, this.#firstOutput);
    this.#frames = new EventFrames({
      send,
      now: () => performance.now(),
      isDynamicTool: (name) => this.#plan?.tools.dynamicToolNames.has(name) ?? false,
      modelCallIdOf: (index) => clientModelCallId(runId, index),
    });
    this.#wire = new ExecWire({ send, protocolError: (message) => this.#protocolError(message), workFailed: (error) => this.#fail(error), log: this.#log });
    this.#lifecycle = new RunLifecycle({
      nc: deps.nc,
      names: deps.names,
      runId,
      timeouts: { publishDeadlineMs: deps.timeouts.publishDeadlineMs, runStatusCheckMs: deps.timeouts.runStatusCheckMs, cancelGraceMs: CANCEL_GRACE_MS },
      ensureStreams: services.ensureStreams,
      toolSets: services.toolSets,
      findRun: (id) => services.store.findRun(id),
      onCancelGraceOver: (reason) => this.#end(cancelledOutcome(reason), { by: "session", closeKind: FailureKind.CLIENT }),
      log: this.#log,
    });
  }

  start(): void {
    this.#prepareAndPublish().catch((error: unknown) => this.#fail(error));
  }

  deliver(message: agent.AgentClientMessage): void {
    const m = message.message;
    switch (m.case) {
      case "kvClientMessage":
        this.#kv.receive(m.value);
        return;
      case "conversationAction":
        if (m.value.action.case === "cancelAction") this.#cancel(m.value.action.value.reason || "cancelled by the user");
        else this.#log.warn({ action: m.value.action.case }, "conversation action during a run ignored");
        return;
      case "clientHeartbeat":
        return;
      case "execClientMessage":
        return this.#toWire(() => this.#wire.onExecMessage(m.value));
      case "execClientControlMessage":
        return this.#toWire(() => this.#wire.onExecControl(m.value));
      case "interactionResponse":
        return this.#toWire(() => this.#wire.onInteractionResponse(m.value));
      case "runRequest":
      case "prewarmRequest":
        this.#log.warn({ message: m.case }, "second run start on a running request ignored");
        return;
      case undefined:
        return;
      default: {
        const unreachable: never = m;
        this.#log.warn({ message: String(unreachable) }, "unknown client message ignored");
      }
    }
  }

  clientDisconnected(): void {
    this.#cancel("client disconnected");
  }

  #onClientEvent(event: ClientEvent): void {
    this.#outputCame();
    this.#frames.accept(event);
    // The response before its commit: its blobs go to the client once the text that came with it was written,
    // and their ACKs overlap the store's append.
    if (event.event.case === "responseComplete") {
      const response = event.event.value;
      const thinkingDurations = this.#frames.thinkingDurations();
      const commits = this.#commits;
      afterFramesWritten(() => {
        if (this.#commits !== commits || this.#ended()) return;
        try {
          this.#projection?.prepareResponse(response, thinkingDurations);
        } catch (error) {
          this.#fail(error);
        }
      });
    }
  }

  /** The first output's frames go to the client before the work that waited for that output starts. */
  #outputCame(): void {
    if (this.#outputSeen) return;
    this.#outputSeen = true;
    afterFramesWritten(this.#firstOutputCame);
  }

  /** A method, not a narrowed field read: the phase changes while preparation awaits. */
  #ended(): boolean {
    return this.#lifecycle.ended();
  }

  /** Client answers to execs/queries; a tool that throws on them ends the run instead of the transport. */
  #toWire(deliver: () => void): void {
    if (this.#ended()) return;
    try {
      deliver();
    } catch (error) {
      this.#fail(error);
    }
  }

  async #prepareAndPublish(): Promise<void> {
    const { deps } = this.#services;
    const { runRequest, stream } = this.#context;
    // The run's subscriptions open while it is prepared (nothing arrives on them before the publish).
    const handlers: RunHandlers = {
      onClientEvent: (event: ClientEvent) => this.#onClientEvent(event),
      onStateEvent: (event) => {
        if (event.event.case === "stateCommitted") this.#commits += 1;
        this.#outputCame();
        return this.#stateHandler?.handle(event) ?? Promise.resolve({ ok: false, error: "the run is not prepared yet" });
      },
    };
    this.#lifecycle.subscribeEarly(handlers);
    const plan = await prepareRun({
      runId: this.#runId,
      memberId: parseMemberId(this.#context.memberId),
      runRequest,
      headers: this.#context.headers,
      models: deps.models,
      web: this.#services.web,
      prompts: this.#services.prompts,
      store: this.#services.store,
      history: this.#services.history,
      histories: this.#services.histories,
      blobSources: {
        conversationId: runRequest.conversationId ?? "",
        prefetched: prefetchedBlobs(runRequest.preFetchedBlobs, this.#log),
        store: this.#services.store,
        kv: this.#kv,
        log: this.#log,
      },
      log: this.#log,
    });
    if (this.#ended()) return;
    this.#plan = plan;

    // Best effort: without them the next turn asks the client for the blobs instead.
    const rootSaves = new RootSaves((blobs) =>
      this.#services.store.putBlobs(blobs, runRequest.conversationId ?? "").catch((error: unknown) => this.#log.warn({ err: error, blobs: blobs.length }, "root blobs not saved in the store")),
      this.#firstOutput,
    );
    const projection = new ConversationProjection({
      base: plan.baseState,
      blobs: this.#blobs,
      systemText: plan.systemText,
      historyRoots: plan.historyRoots,
      contextWindow: plan.run.model?.contextWindow ?? plan.model.contextWindow,
      mode: plan.mode,
      turn: plan.userMessage ? { userMessage: plan.userMessage, requestId: this.#runId } : undefined,
      onNewRoot: (bytes) => rootSaves.add(bytes),
    });
    this.#projection = projection;
    projection.appendInitialMessages(plan.newRootMessages);
    // The client's ACKs for these blobs gate the first checkpoint, not the model call (and they are only
    // sent once the owner's first event came, see #firstOutput).
    projection.initialBlobsAcked().catch((error: unknown) => this.#fail(error));

    const driver = new ToolRoundDriver({
      conversationId: plan.run.conversationId,
      setup: plan.tools,
      readPaths: plan.baseState.readPaths,
      wire: this.#wire,
      web: this.#services.web,
      committedResult: (call) =>
        this.#services.store.findToolResult(parseConversationId(plan.run.conversationId), { callId: call.callId, name: call.name, argumentsJson: call.argumentsJson }),
      send: (message) => stream.send(message),
      modelCallIdOf: (callId) => this.#frames.toolCalls.modelCallIdOf(callId),
      publishResult: (result) => this.#lifecycle.publishToolResult(result),
      publishFailed: (error) => this.#fail(error),
      ended: () => this.#ended(),
      now: () => Date.now(),
      log: this.#log,
    });
    const rounds = new ToolRoundCommits({
      projection,
      driver,
      setup: plan.tools,
      store: this.#services.store,
      thinkingDurations: () => this.#frames.thinkingDurations(),
      log: this.#log,
    });
    this.#stateHandler = new StateHandler({
      projection,
      frames: this.#frames,
      driver,
      rounds,
      send: (message) => stream.send(message),
      endByTerminal: (outcome) => this.#endByTerminal(outcome),
      fail: (failure) => this.#endWithFailure(failure),
      answerSettled: (revisionId) => this.#rememberSettled(plan, projection, revisionId),
      ended: () => this.#ended(),
      log: this.#log,
    });
    const started = await this.#lifecycle.start(plan.run, handlers);
    if (started === "ended") return;
    this.#log.info(
      { model: plan.model.id, mode: plan.run.prompt?.mode, action: plan.run.action.case, base_revision_id: plan.run.baseRevisionId },
      "run published",
    );
  }

  /**
   * The roots the client now holds (the settled checkpoint it will send with its next turn) are the
   * history of the answer's revision: the next turn finds them all remembered and imports nothing
   * new (no blob fetch, no parse, an import of nothing that the store checks).
   */
  #rememberSettled(plan: RunPlan, projection: ConversationProjection, revisionId: string): void {
    const roots = projection.settledRoots;
    this.#services.history.remember(plan.run.conversationId, plan.run.memberId, roots, {
      revisionId,
      historyRoots: roots.slice(1),
      contextText: plan.contextText,
      leadingSystemRoot: true,
    });
  }

  /**
   * A run published without a history import (a new conversation) was checked for its member first
   * by run.begin, whose refusal reaches here as a store failure. Only then is the store asked (an
   * import of nothing: the conversation must be the member's), so that another member's
   * conversation still ends as permission_denied, as when the import came before the publish.
   */
  #endByTerminal(outcome: EndOutcome): void {
    const plan = this.#plan;
    if (plan === undefined || plan.ownershipChecked || outcome.kind !== "error" || outcome.code !== "internal") {
      this.#end(outcome, { by: "terminal" });
      return;
    }
    const verdict = this.#services.store.importHistory({ conversationId: parseConversationId(plan.run.conversationId), memberId: parseMemberId(plan.run.memberId), messages: [] });
    verdict.then(
      () => this.#end(outcome, { by: "terminal" }),
      (error: unknown) => {
        const failure = sessionFailureOf(error);
        this.#end(failure.kind === "forbidden" ? endOutcomeOf(failure) : outcome, { by: "terminal" });
      },
    );
  }

  #cancel(reason: string): void {
    const effect = this.#lifecycle.cancel(reason);
    switch (effect) {
      case "end_now":
        this.#log.info({ reason }, "run cancelled before it started");
        this.#end(cancelledOutcome(reason), { by: "session", closeKind: FailureKind.CLIENT });
        return;
      case "cancelling":
        this.#log.info({ reason }, "cancelling run");
        return;
      case "ignored":
        return;
      default: {
        const unreachable: never = effect;
        throw new Error(`unknown cancel effect ${String(unreachable)}`);
      }
    }
  }

  /** The client broke the exec/interaction protocol: logged here, never handed to the run owner as a result. */
  #protocolError(message: string): void {
    if (this.#ended()) return;
    this.#log.warn({ protocol_error: message }, "client protocol error");
    this.#endWithFailure({ kind: "protocol", message });
  }

  #fail(error: unknown): void {
    if (this.#ended()) return;
    const failure = sessionFailureOf(error);
    this.#log.warn({ err: error, failure: failure.kind }, "run failed in the adapter");
    this.#endWithFailure(failure);
  }

  #endWithFailure(failure: SessionFailure): void {
    this.#end(endOutcomeOf(failure), { by: "session", closeKind: closeKindOf(failure) });
  }

  #end(outcome: EndOutcome, ending: Ending): void {
    // The owner is still running a run nobody listens to any more: the lifecycle sends it this stop command.
    if (!this.#lifecycle.end(ending.by === "session" ? stopCommandOf(outcome, ending.closeKind) : undefined)) return;
    this.#frames.closeOpenBlocks();
    const aborted = this.#wire.abortRunning();
    if (aborted.length > 0) this.#log.info({ exec_ids: aborted }, "running execs aborted");
    this.#context.stream.end(outcome);
    this.#kv.close("the run ended");
    this.#log.info({ outcome: outcome.kind === "ok" ? "ok" : outcome.code }, "run stream ended");
  }
}

/** An error end (other than a cancel) fails the run with the failure's kind; any other end cancels it. */
function stopCommandOf(outcome: EndOutcome, closeKind: FailureKind): StopCommand {
  if (outcome.kind === "error" && outcome.code !== "canceled") return { kind: "client_closed", error: outcome.message, failureKind: closeKind };
  return { kind: "cancel", reason: outcome.kind === "ok" ? "client stream ended" : outcome.message };
}
