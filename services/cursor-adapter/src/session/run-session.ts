/**
 * One Cursor run (one request id): prepares and publishes the PreparedRun,
 * turns the run owner's events into frames, runs its tool rounds on the client
 * (exec / interaction wire ids stay here), projects its commits into
 * checkpoints, relays cancel, and ends the Cursor stream exactly once (running
 * execs are aborted before an error end).
 *
 * Lifecycle: preparing (history import, blob SETs, subscriptions) -> running
 * (PreparedRun published; a run silent for long has its status read from the
 * store, in case its terminal was lost) -> ended (EndStream written; bus
 * subscriptions torn down once in-flight state replies are sent).
 */
import { create } from "@bufbuild/protobuf";
import { assertSubjectToken, FailureKind, StateEventSchema, type ClientEvent } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { prefetchedBlobs } from "../checkpoint/blob-fetch.ts";
import { ClientBlobs } from "../checkpoint/client-blobs.ts";
import { ConversationProjection } from "../checkpoint/conversation-projection.ts";
import { KvChannel, KvError } from "../checkpoint/kv-channel.ts";
import { EventFrames } from "../interaction/event-frames.ts";
import { prepareRun, type RunPlan } from "../request/prepare-run.ts";
import type { EndOutcome, RunOpenContext, RunSession } from "../transport/session-port.ts";
import type { SessionServices } from "./session-services.ts";
import { ExecWire } from "./exec-wire.ts";
import { cancelledOutcome, closeKindOf, endOutcomeOf, SessionError } from "./failures.ts";
import {
  BusPublishError,
  openRunBus,
  publishCancel,
  publishClientClosed,
  publishPreparedRun,
  publishToolResult,
  type RunBus,
} from "./run-bus.ts";
import { RunStatusWatch } from "./run-status-watch.ts";
import { StateHandler } from "./state-handler.ts";
import { ToolRoundCommits } from "./tool-round-commits.ts";
import { ToolRoundDriver } from "./tool-round-driver.ts";

/** How long a cancelled run may take to report its terminal before the stream ends anyway. */
export const CANCEL_GRACE_MS = 1_500;

export function openRunSession(services: SessionServices, context: RunOpenContext): RunSession {
  const session = new CursorRunSession(services, context);
  session.start();
  return session;
}

class CursorRunSession implements RunSession {
  readonly #services: SessionServices;
  readonly #context: RunOpenContext;
  readonly #runId: string;
  readonly #log: Logger;
  readonly #kv: KvChannel;
  readonly #blobs: ClientBlobs;
  readonly #frames: EventFrames;
  readonly #wire: ExecWire;
  #plan: RunPlan | undefined;
  #bus: RunBus | undefined;
  #statusWatch: RunStatusWatch | undefined;
  #published = false;
  #ended = false;
  #cancelSent = false;
  #cancelTimer: NodeJS.Timeout | undefined;

  constructor(services: SessionServices, context: RunOpenContext) {
    this.#services = services;
    this.#context = context;
    this.#runId = context.requestId;
    const { deps } = services;
    this.#log = deps.log.child({ run_id: this.#runId, request_id: context.requestId, conversation_id: context.runRequest.conversationId ?? "" });
    const send = (message: agent.AgentServerMessage) => context.stream.send(message);
    this.#kv = new KvChannel({ send, log: this.#log, setTimeoutMs: deps.timeouts.blobAckMs, getTimeoutMs: deps.timeouts.kvGetMs });
    this.#blobs = new ClientBlobs(this.#kv);
    this.#frames = new EventFrames({
      send,
      now: () => performance.now(),
      isDynamicTool: (name) => this.#plan?.tools.dynamicToolNames.has(name) ?? false,
      modelCallIdOf: (index) => `${this.#runId}:${index}`,
    });
    this.#wire = new ExecWire({ send, protocolError: (message) => this.#protocolError(message), log: this.#log });
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

  /** Client answers to execs/queries; a tool that throws on them ends the run instead of the transport. */
  #toWire(deliver: () => void): void {
    if (this.#ended) return;
    try {
      deliver();
    } catch (error) {
      this.#fail(error);
    }
  }

  async #prepareAndPublish(): Promise<void> {
    const { deps } = this.#services;
    const { runRequest, stream } = this.#context;
    try {
      assertSubjectToken(this.#runId, "request id");
    } catch {
      throw new SessionError({ kind: "invalid_request", message: `request id ${JSON.stringify(this.#runId)} cannot be used as a run id` });
    }

    const plan = await prepareRun({
      runId: this.#runId,
      memberId: this.#context.memberId,
      runRequest,
      models: deps.models,
      prompts: this.#services.prompts,
      store: this.#services.store,
      blobSources: {
        prefetched: prefetchedBlobs(runRequest.preFetchedBlobs, this.#log),
        store: this.#services.store,
        kv: this.#kv,
        log: this.#log,
      },
      log: this.#log,
    });
    if (this.#ended) return;
    this.#plan = plan;

    const projection = new ConversationProjection({
      base: plan.baseState,
      blobs: this.#blobs,
      systemText: plan.systemText,
      historyRoots: plan.historyRoots,
      contextWindow: plan.model.contextWindow,
      mode: plan.mode,
      turn: plan.userMessage ? { userMessage: plan.userMessage, requestId: this.#runId } : undefined,
      // Best effort: without it the next turn asks the client for the blob instead.
      onNewRoot: (bytes) => this.#services.store.putBlob(bytes).catch((error: unknown) => this.#log.warn({ err: error }, "root blob not saved in the store")),
    });
    projection.appendInitialMessages(plan.newRootMessages);
    // The client's ACKs for these blobs gate the first checkpoint, not the model call.
    projection.initialBlobsAcked().catch((error: unknown) => this.#fail(error));

    const driver = new ToolRoundDriver({
      conversationId: plan.run.conversationId,
      setup: plan.tools,
      readPaths: plan.baseState.readPaths,
      wire: this.#wire,
      send: (message) => stream.send(message),
      modelCallIdOf: (callId) => this.#frames.toolCalls.modelCallIdOf(callId),
      publishResult: (result) => publishToolResult(deps.nc, deps.names, this.#runId, result, deps.timeouts.publishDeadlineMs),
      publishFailed: (error) => this.#fail(error),
      ended: () => this.#ended,
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
    const stateHandler = new StateHandler({
      projection,
      frames: this.#frames,
      driver,
      rounds,
      send: (message) => stream.send(message),
      end: (outcome, byTerminal) => this.#end(outcome, byTerminal),
      ended: () => this.#ended,
      log: this.#log,
    });
    this.#bus = await openRunBus(
      deps.nc,
      deps.names,
      this.#runId,
      {
        onClientEvent: (event: ClientEvent) => {
          this.#statusWatch?.touch();
          if (!this.#ended) this.#frames.accept(event);
        },
        onStateEvent: (event) => {
          this.#statusWatch?.touch();
          return stateHandler.handle(event);
        },
      },
      this.#log,
    );
    if (this.#ended) return void this.#bus.close();

    await this.#services.ensureStreams();
    if (this.#ended) return void this.#bus.close();
    await publishPreparedRun(deps.nc, deps.names, plan.run, deps.timeouts.publishDeadlineMs);
    this.#published = true;
    this.#statusWatch = new RunStatusWatch({
      runId: this.#runId,
      intervalMs: deps.timeouts.runStatusCheckMs,
      getRun: (runId) => this.#services.store.getRun(runId),
      // The same path as a terminal state event: idempotent if that arrives too.
      onEnded: (terminal) => void stateHandler.handle(create(StateEventSchema, { event: { case: "terminal", value: terminal } })),
      log: this.#log,
    });
    this.#statusWatch.touch();
    this.#log.info(
      { model: plan.model.id, mode: plan.run.prompt?.mode, action: plan.run.action.case, base_revision_id: plan.run.baseRevisionId },
      "run published",
    );
    // Cancelled while the publish was in flight: the run exists now, so stop it.
    if (this.#ended) this.#sendCancel("the client went away before the run started");
  }

  #cancel(reason: string): void {
    if (this.#ended) return;
    if (!this.#published) {
      this.#log.info({ reason }, "run cancelled before it started");
      this.#end(cancelledOutcome(reason), false);
      return;
    }
    if (this.#cancelTimer !== undefined) return;
    this.#log.info({ reason }, "cancelling run");
    this.#sendCancel(reason);
    this.#cancelTimer = setTimeout(() => this.#end(cancelledOutcome(reason), false), CANCEL_GRACE_MS);
    this.#cancelTimer.unref();
  }

  #sendCancel(reason: string): void {
    if (this.#cancelSent) return;
    this.#cancelSent = true;
    const { deps } = this.#services;
    publishCancel(deps.nc, deps.names, this.#runId, reason, deps.timeouts.publishDeadlineMs).catch((error: unknown) =>
      this.#log.error({ err: error }, "cancel command not published"),
    );
  }

  /** The run owner must stop because this side failed (not a user cancel). */
  #sendClientClosed(error: string, failureKind: FailureKind): void {
    if (this.#cancelSent) return;
    this.#cancelSent = true;
    const { deps } = this.#services;
    publishClientClosed(deps.nc, deps.names, this.#runId, { error, failureKind }, deps.timeouts.publishDeadlineMs).catch((err: unknown) =>
      this.#log.error({ err }, "client closed command not published"),
    );
  }

  /** The client broke the exec/interaction protocol: logged here, never handed to the run owner as a result. */
  #protocolError(message: string): void {
    if (this.#ended) return;
    this.#log.warn({ protocol_error: message }, "client protocol error");
    this.#fail(new SessionError({ kind: "protocol", message }));
  }

  #fail(error: unknown): void {
    if (this.#ended) return;
    const failure =
      error instanceof SessionError
        ? error.failure
        : error instanceof KvError
          ? ({ kind: "client_blob", message: error.message } as const)
          : error instanceof BusPublishError
            ? ({ kind: "bus", message: error.message } as const)
            : ({ kind: "internal", message: error instanceof Error ? error.message : String(error) } as const);
    this.#log.warn({ err: error, failure: failure.kind }, "run failed in the adapter");
    this.#end(endOutcomeOf(failure), false, closeKindOf(failure));
  }

  /** `closeKind`: how the run owner records a run this side ends with an error. */
  #end(outcome: EndOutcome, byTerminal: boolean, closeKind: FailureKind = FailureKind.CLIENT): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#cancelTimer !== undefined) clearTimeout(this.#cancelTimer);
    this.#statusWatch?.stop();
    this.#frames.closeOpenBlocks();
    const aborted = this.#wire.abortRunning();
    if (aborted.length > 0) this.#log.info({ exec_ids: aborted }, "running execs aborted");
    this.#context.stream.end(outcome);
    this.#kv.close("the run ended");
    // The owner is still running a run nobody listens to any more: stop it.
    if (this.#published && !byTerminal) {
      if (outcome.kind === "error" && outcome.code !== "canceled") this.#sendClientClosed(outcome.message, closeKind);
      else this.#sendCancel(outcome.kind === "ok" ? "client stream ended" : outcome.message);
    }
    void this.#bus?.close();
    this.#log.info({ outcome: outcome.kind === "ok" ? "ok" : outcome.code }, "run stream ended");
  }
}
