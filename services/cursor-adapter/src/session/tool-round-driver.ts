/**
 * Runs the tool calls of the run owner's ExecuteToolRound on the Cursor
 * client: per call, plan it (tools/), show tool_call_started, then exec /
 * interaction query / server-local work; execution output becomes
 * tool_call_delta; the outcome becomes tool_call_completed (typed result) and a
 * ClientCommand{tool_result} to the run owner. Results are published one at a
 * time, in the order the calls finished.
 *
 * A round is known by its id (the shared ToolRoundLedger of @byok/run-client):
 * a repeated ExecuteToolRound (new owner after failover) dispatches only calls
 * this session has not started. A gateway-side tool (WebFetch, WebSearch) of
 * the round a resume re-created whose call already has a committed result in
 * the conversation reuses it: no new approval, no new fetch. The driver also
 * keeps the conversation state tools change (read paths, todos, MCP routes,
 * mode, plan) for the settled checkpoint.
 */
import type { ToolCallPart } from "@byok/contracts";
import type { agent, tools } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { interactionMessage } from "../interaction/update-message.ts";
import type { RunToolSetup } from "../request/prepare-run.ts";
import { toolCallCompletedUpdate, toolCallDeltaUpdate, toolCallStartedUpdate, type ToolInteractionUpdate } from "../tools/cards.ts";
import { withReadPaths } from "../tools/files.ts";
import { planToolCall } from "../tools/plan-tool-call.ts";
import type { CommittedResult, ToolOutcome, ToolPlan, ToolPlanContext } from "../tools/types.ts";
import type { WebTools } from "../tools/web-tools.ts";
import type { ExecWire, WireProgress } from "./exec-wire.ts";
import { ToolRoundLedger, type ToolResultInit, type ToolRound } from "@byok/run-client";

export interface ToolRoundDriverPorts {
  conversationId: string;
  setup: RunToolSetup;
  /** Files Read earlier in the conversation (the client's checkpoint). */
  readPaths: readonly string[];
  wire: ExecWire;
  web: WebTools;
  /** A result an earlier run of the conversation committed for the same call (id, tool, arguments; store lookup). */
  committedResult(call: ToolCallPart): Promise<CommittedResult | undefined>;
  send(message: agent.AgentServerMessage): void;
  /** model_call_id of the model call that produced `callId` ("" when unknown). */
  modelCallIdOf(callId: string): string;
  /** Publishes one result to the run owner (JetStream). */
  publishResult(result: ToolResultInit): Promise<void>;
  /** A result could not be published: the run cannot go on. */
  publishFailed(error: unknown): void;
  ended(): boolean;
  now(): number;
  log: Logger;
}

interface RoundInfo {
  /** Card started_at_ms and the staged checkpoint's pendingToolCallStartedAtMs. */
  readonly startedAtMs: number;
  /** The round a resume re-created from the client's staged checkpoint. */
  readonly resumed: boolean;
}

type RoundState = ToolRound<RoundInfo, ToolOutcome>;

export class ToolRoundDriver {
  readonly #ports: ToolRoundDriverPorts;
  readonly #rounds: ToolRoundLedger<RoundInfo, ToolOutcome>;
  readonly #allowedToolNames: ReadonlySet<string>;
  #readPaths: string[];
  #todos: tools.TodoItem[];
  #todosChanged = false;
  #mode: string | undefined;
  #plan: string | undefined;
  #stepUpdates = 0;
  #resumedRoundUsed = false;

  constructor(ports: ToolRoundDriverPorts) {
    this.#ports = ports;
    this.#rounds = new ToolRoundLedger({ publishResult: ports.publishResult, publishFailed: ports.publishFailed, ended: ports.ended });
    this.#allowedToolNames = new Set(ports.setup.toolNames);
    this.#readPaths = [...ports.readPaths];
    this.#todos = [...ports.setup.todos];
  }

  /**
   * The round became durable (StateCommitted TOOL_ROUND_STAGED). Its start
   * time is now, except for the round a resume re-creates from the client's
   * staged checkpoint: that one keeps the checkpoint's time.
   */
  beginRound(roundId: string, calls: readonly ToolCallPart[]): { startedAtMs: number } {
    return { startedAtMs: this.#round(roundId, calls).info.startedAtMs };
  }

  /** ExecuteToolRound: starts every call of the round this session has not started yet. */
  execute(roundId: string, calls: readonly ToolCallPart[]): void {
    if (!this.#rounds.has(roundId)) this.#ports.log.info({ round_id: roundId }, "tool round executed without a staged commit in this session");
    const round = this.#round(roundId, calls);
    for (const call of this.#rounds.dispatch(roundId, calls)) this.#dispatch(round, call);
  }

  /** The round's calls (from its staged assistant or its ExecuteToolRound), in model order. */
  callIdsOf(roundId: string): string[] | undefined {
    return this.#rounds.get(roundId)?.calls.map((c) => c.callId);
  }

  /** The completed card of a call of the round, if it finished in this session. */
  completedCard(roundId: string, callId: string): tools.ToolCall | undefined {
    return this.#rounds.get(roundId)?.outcomes.get(callId)?.toolCall;
  }

  get readPaths(): readonly string[] {
    return this.#readPaths;
  }

  /** The conversation's todo list when a TodoWrite (or a plan) changed it in this run; undefined otherwise. */
  get changedTodos(): readonly tools.TodoItem[] | undefined {
    return this.#todosChanged ? this.#todos : undefined;
  }

  /** The prompt mode an approved SwitchMode chose in this run; undefined otherwise. */
  get changedMode(): string | undefined {
    return this.#mode;
  }

  /** The Markdown of the plan CreatePlan made in this run; undefined otherwise. */
  get changedPlan(): string | undefined {
    return this.#plan;
  }

  /** The resumed round's original start time (and that it is the resumed round), else now. */
  #infoOf(calls: readonly ToolCallPart[]): RoundInfo {
    const resumed = this.#ports.setup.resumedRound;
    if (resumed !== undefined && !this.#resumedRoundUsed && sameIds(resumed.callIds, calls.map((c) => c.callId))) {
      this.#resumedRoundUsed = true;
      return { startedAtMs: resumed.startedAtMs ?? this.#ports.now(), resumed: true };
    }
    return { startedAtMs: this.#ports.now(), resumed: false };
  }

  #round(roundId: string, calls: readonly ToolCallPart[]): RoundState {
    return this.#rounds.round(roundId, calls, () => this.#infoOf(calls));
  }

  #dispatch(round: RoundState, call: ToolCallPart): void {
    const { wire, log } = this.#ports;
    const modelCallId = this.#ports.modelCallIdOf(call.callId);
    const plan = planToolCall({ callId: call.callId, name: call.name, argumentsJson: call.argumentsJson }, this.#planContext(round));
    this.#update(toolCallStartedUpdate(call.callId, plan.started, modelCallId));
    const onProgress = (progress: WireProgress): void => this.#progress(round, call.callId, modelCallId, progress);
    log.debug({ call_id: call.callId, tool: call.name, plan: plan.kind, round_id: round.roundId }, "tool call started");
    switch (plan.kind) {
      case "exec":
        wire.startExec(call.callId, plan.exec, onProgress);
        return;
      case "interaction":
        // Only a round re-created from the client's staged checkpoint can hold calls an earlier run already did.
        if (plan.reuse === undefined || !round.info.resumed) wire.startQuery(call.callId, plan.query, plan.onResponse, onProgress);
        else this.#reuseOrAsk(round, call, modelCallId, plan, plan.reuse, onProgress);
        return;
      case "server":
        wire.later(plan.delayMs, () => wire.runWork(() => plan.complete(), onProgress));
        return;
      case "invalid":
        log.info({ call_id: call.callId, tool: call.name }, "tool call rejected before execution");
        this.#complete(round, call.callId, modelCallId, plan.outcome);
        return;
      default: {
        const unreachable: never = plan;
        throw new Error(`unknown tool plan ${String(unreachable)}`);
      }
    }
  }

  /** A committed result of an earlier run is the outcome; without one the user is asked as usual. */
  #reuseOrAsk(
    round: RoundState,
    call: ToolCallPart,
    modelCallId: string,
    plan: Extract<ToolPlan, { kind: "interaction" }>,
    reuse: (committed: CommittedResult) => ToolOutcome,
    onProgress: (progress: WireProgress) => void,
  ): void {
    const callId = call.callId;
    const ask = (): void => this.#ports.wire.startQuery(callId, plan.query, plan.onResponse, onProgress);
    this.#ports.committedResult(call).then(
      (committed) => {
        if (this.#ports.ended()) return;
        if (committed === undefined) return ask();
        this.#ports.log.info({ call_id: callId, round_id: round.roundId }, "gateway-side tool already has a committed result; reusing it");
        this.#complete(round, callId, modelCallId, reuse(committed));
      },
      (error: unknown) => {
        this.#ports.log.warn({ err: error, call_id: callId }, "committed result lookup failed; asking the user again");
        if (!this.#ports.ended()) ask();
      },
    );
  }

  #planContext(round: RoundState): ToolPlanContext {
    const { setup } = this.#ports;
    return {
      conversationId: this.#ports.conversationId,
      terminalsFolder: setup.terminalsFolder,
      allowedToolNames: this.#allowedToolNames,
      mcp: setup.mcp,
      todos: this.#todos,
      mode: this.#mode ?? setup.mode,
      subagents: setup.subagents,
      stepUpdates: this.#stepUpdates,
      web: this.#ports.web,
      startedAtMs: round.info.startedAtMs,
      now: this.#ports.now,
    };
  }

  #progress(round: RoundState, callId: string, modelCallId: string, progress: WireProgress): void {
    switch (progress.kind) {
      case "waiting":
        if (progress.delta !== undefined) this.#update(toolCallDeltaUpdate(callId, progress.delta, modelCallId));
        return;
      case "done":
        this.#complete(round, callId, modelCallId, progress.outcome);
        return;
      default: {
        const unreachable: never = progress;
        throw new Error(`unknown tool progress ${String(unreachable)}`);
      }
    }
  }

  #complete(round: RoundState, callId: string, modelCallId: string, outcome: ToolOutcome): void {
    if (!this.#rounds.finish(round.roundId, callId, outcome)) return;
    this.#update(toolCallCompletedUpdate(callId, outcome.toolCall, modelCallId));
    for (const effect of outcome.effects) {
      switch (effect.kind) {
        case "read_path":
          this.#readPaths = withReadPaths(this.#readPaths, [effect]);
          break;
        case "todos":
          this.#todos = effect.todos;
          this.#todosChanged = true;
          break;
        case "mcp_state":
          this.#ports.setup.mcp.applyState(effect.servers);
          break;
        case "mode":
          this.#mode = effect.mode;
          break;
        case "plan":
          this.#plan = effect.markdown;
          // The plan's steps become the todo list; a plan without steps leaves the list as it is.
          if (effect.todos.length > 0) {
            this.#todos = effect.todos;
            this.#todosChanged = true;
          }
          break;
        case "step_update":
          this.#stepUpdates += 1;
          break;
        default: {
          const unreachable: never = effect;
          throw new Error(`unknown tool effect ${String(unreachable)}`);
        }
      }
    }
    this.#ports.log.debug({ call_id: callId, is_error: outcome.isError, round_id: round.roundId }, "tool call completed");
    const result: ToolResultInit = { callId, content: outcome.content, isError: outcome.isError };
    this.#rounds.publish(result);
  }

  #update(update: ToolInteractionUpdate): void {
    this.#ports.send(interactionMessage(update));
  }
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
