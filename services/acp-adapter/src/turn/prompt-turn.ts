/**
 * One session/prompt = one run on the shared run boundary (@byok/run-client):
 * the RunLifecycle publishes the PreparedRun and keeps the phase, the
 * StateEventRouter orders the owner's state events, the ToolRoundLedger
 * dispatches each tool call once and publishes its result once, and the
 * owner's ClientEvents stream to the editor as session updates. `done`
 * resolves with how the prompt ends: a stop reason, or a failure.
 *
 * ACP needs no client state projected at a barrier: commits are acknowledged
 * at once (a final answer also reports the context size as usage_update).
 * Cancel (session/cancel, a newer prompt, the editor going away) sends the
 * owner a cancel and waits for its terminal at most CANCEL_GRACE_MS; running
 * tools are aborted (a running command is killed). A round's calls run one at
 * a time in the model's order, so the member sees one permission request at a
 * time, in the order the model asked.
 */
import { FailureKind, type BusNames, type ExecuteToolRound, type PreparedRun, type RunId, type RunRecord, type StateCommitted, type ToolCallPart } from "@byok/contracts";
import type { Logger, NatsConnection, ToolSets } from "@byok/platform";
import { RunLifecycle, StateEventRouter, ToolRoundLedger, type EnsureRunStreams, type RunLifecycleTimeouts, type StateAckInit, type StopCommand } from "@byok/run-client";
import type { SessionUpdate } from "../acp/acp-types.ts";
import type { EditorClient } from "../acp/editor-client.ts";
import { acpFailureOf, failureMessage } from "../acp/failures.ts";
import type { ToolLimits } from "../config.ts";
import type { AcpAdapterMetrics } from "../metrics.ts";
import type { PermissionPorts } from "../tools/permissions.ts";
import { runTool } from "../tools/run-tool.ts";
import { errorMessage, failed, type ToolCallView, type ToolOutcome } from "../tools/tool-context.ts";
import type { AcpToolName } from "../tools/tool-names.ts";
import { describeCall } from "../tools/tool-view.ts";
import { EventUpdates } from "./event-updates.ts";
import { CANCELLED, turnEndOf, type TurnEnd } from "./stop-reason.ts";

export interface TurnDeps {
  readonly nc: NatsConnection;
  readonly names: BusNames;
  readonly ensureStreams: EnsureRunStreams;
  /** Runs name their tool set by digest once it is stored; without it the tools travel inline. */
  readonly toolSets?: ToolSets;
  findRun(runId: RunId): Promise<RunRecord | undefined>;
  readonly timeouts: RunLifecycleTimeouts;
  readonly limits: ToolLimits;
  readonly metrics: AcpAdapterMetrics;
  readonly log: Logger;
}

/** The session as the turn uses it (the editor is the session's current connection). */
export interface TurnSession {
  readonly sessionId: string;
  readonly cwd: string;
  readonly editor: EditorClient;
  /** Permission keys allowed "always" in the session. */
  allowedAlways(): ReadonlySet<string>;
  rememberAlways(key: string): void;
}

export interface TurnPlan {
  readonly run: PreparedRun;
  /** The tools the run offers (a call of any other is refused). */
  readonly toolNames: readonly AcpToolName[];
  /** The model's context window (usage_update size). */
  readonly contextWindow: number;
}

export class PromptTurn {
  readonly runId: RunId;
  readonly #deps: TurnDeps;
  readonly #session: TurnSession;
  readonly #plan: TurnPlan;
  readonly #log: Logger;
  readonly #lifecycle: RunLifecycle;
  readonly #router: StateEventRouter;
  readonly #ledger: ToolRoundLedger<undefined, ToolOutcome>;
  readonly #updates: EventUpdates;
  readonly #offered: ReadonlySet<AcpToolName>;
  readonly #tools = new AbortController();
  /** Calls run one at a time, in the model's order: the member answers one permission request at a time. */
  #calls: Promise<void> = Promise.resolve();
  readonly done: Promise<TurnEnd>;
  #resolve: (end: TurnEnd) => void = () => undefined;

  constructor(deps: TurnDeps, session: TurnSession, plan: TurnPlan) {
    this.runId = plan.run.runId as RunId;
    this.#deps = deps;
    this.#session = session;
    this.#plan = plan;
    this.#log = deps.log.child({ run_id: this.runId, conversation_id: plan.run.conversationId });
    this.#offered = new Set(plan.toolNames);
    this.done = new Promise<TurnEnd>((resolve) => (this.#resolve = resolve));
    this.#lifecycle = new RunLifecycle({
      nc: deps.nc,
      names: deps.names,
      runId: this.runId,
      timeouts: deps.timeouts,
      ensureStreams: deps.ensureStreams,
      ...(deps.toolSets === undefined ? {} : { toolSets: deps.toolSets }),
      findRun: deps.findRun,
      onCancelGraceOver: () => this.#finish(CANCELLED, undefined),
      log: this.#log,
    });
    this.#router = new StateEventRouter({
      ended: () => this.#lifecycle.ended(),
      commit: async (committed) => this.#commit(committed),
      execute: (round) => this.#execute(round),
      terminal: (outcome) => this.#finish(turnEndOf(outcome), undefined),
    });
    this.#ledger = new ToolRoundLedger({
      publishResult: (result) => this.#lifecycle.publishToolResult(result),
      publishFailed: (error) => {
        const failure = acpFailureOf(error);
        this.#log.warn({ err: error }, "tool result not published; ending the run");
        this.#finish({ kind: "failed", failure }, { kind: "client_closed", error: failureMessage(failure), failureKind: FailureKind.CLIENT });
      },
      ended: () => this.#lifecycle.ended(),
    });
    this.#updates = new EventUpdates((update) => this.#send(update), this.#log);
  }

  /** Publishes the run; `done` resolves when it ends. */
  start(): Promise<TurnEnd> {
    this.#lifecycle
      .start(this.#plan.run, { onClientEvent: (event) => this.#updates.accept(event), onStateEvent: (event) => this.#router.handle(event) })
      .then(
        (started) => {
          if (started === "published") this.#log.info({ model: this.#plan.run.model?.modelId, mode: this.#plan.run.prompt?.mode }, "run published");
        },
        (error: unknown) => this.#finish({ kind: "failed", failure: acpFailureOf(error) }, undefined),
      );
    return this.done;
  }

  /** The member stopped the prompt (or the editor went away, or a newer prompt replaces it). */
  cancel(reason: string): void {
    this.#tools.abort(new Error(reason));
    const effect = this.#lifecycle.cancel(reason);
    switch (effect) {
      case "end_now":
        this.#finish(CANCELLED, undefined);
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

  #finish(end: TurnEnd, stop: StopCommand | undefined): void {
    if (!this.#lifecycle.end(stop)) return;
    this.#tools.abort(new Error("the run ended"));
    this.#log.info({ end: end.kind === "stop" ? end.stopReason : end.failure.kind }, "prompt turn ended");
    this.#resolve(end);
  }

  #commit(committed: StateCommitted): StateAckInit {
    const used = committed.contextTokens;
    if (used !== undefined) this.#send({ sessionUpdate: "usage_update", used: Number(used), size: this.#plan.contextWindow });
    return { ok: true };
  }

  #execute(round: ExecuteToolRound): void {
    this.#ledger.round(round.roundId, round.calls, () => undefined);
    const fresh = this.#ledger.dispatch(round.roundId, round.calls);
    this.#log.debug({ round_id: round.roundId, calls: round.calls.length, dispatched: fresh.length }, "tool round dispatched");
    for (const call of fresh) {
      this.#updates.announce(call.callId, call.name);
      this.#calls = this.#calls.then(() => this.#runCall(round.roundId, call));
    }
  }

  async #runCall(roundId: string, call: ToolCallPart): Promise<void> {
    if (this.#lifecycle.ended()) return;
    const session = this.#session;
    const { sessionId, cwd } = session;
    if (this.#tools.signal.aborted) {
      this.#finishCall(roundId, call, failed("The tool call did not run: the prompt was cancelled."));
      return;
    }
    const permissions: PermissionPorts = {
      ask: (toolCall, options) => session.editor.requestPermission(sessionId, toolCall, options, this.#tools.signal),
      allowedAlways: () => session.allowedAlways(),
      rememberAlways: (key) => session.rememberAlways(key),
      decided: (kind, verdict) => this.#deps.metrics.permission(kind, verdict),
    };
    const described = describeCall(call.name, call.argumentsJson);
    this.#show(call.callId, { title: described.title, locations: described.locations });
    let outcome: ToolOutcome;
    try {
      outcome = await runTool(call, this.#offered, {
        sessionId,
        cwd,
        callId: call.callId,
        editor: session.editor,
        permissions,
        limits: this.#deps.limits,
        signal: this.#tools.signal,
        show: (view) => this.#show(call.callId, view),
        plan: (entries) => this.#send({ sessionUpdate: "plan", entries }),
      });
    } catch (error) {
      outcome = failed(this.#tools.signal.aborted ? "The tool call was stopped: the prompt ended." : `The tool call failed in the editor: ${errorMessage(error)}`);
    }
    this.#finishCall(roundId, call, outcome);
  }

  #finishCall(roundId: string, call: ToolCallPart, outcome: ToolOutcome): void {
    if (!this.#ledger.finish(roundId, call.callId, outcome)) return;
    this.#deps.metrics.toolCall(call.name, outcome.isError);
    this.#show(call.callId, { status: outcome.isError ? "failed" : "completed", ...outcome.view });
    this.#log.debug({ call_id: call.callId, tool: call.name, is_error: outcome.isError }, "tool call finished");
    this.#ledger.publish({ callId: call.callId, content: outcome.content, isError: outcome.isError });
  }

  #show(callId: string, view: ToolCallView): void {
    this.#send({ sessionUpdate: "tool_call_update", toolCallId: callId, ...view });
  }

  #send(update: SessionUpdate): void {
    this.#session.editor.update(this.#session.sessionId, update).catch((error: unknown) => this.#log.debug({ err: error }, "session update not sent"));
  }
}
