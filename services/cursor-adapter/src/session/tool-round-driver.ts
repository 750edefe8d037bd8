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
 * this session has not started. The driver also keeps the conversation state
 * tools change (read paths, todos, MCP routes) for the settled checkpoint.
 */
import type { ToolCallPart } from "@byok/contracts";
import type { agent, tools } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { interactionMessage } from "../interaction/update-message.ts";
import type { RunToolSetup } from "../request/prepare-run.ts";
import { toolCallCompletedUpdate, toolCallDeltaUpdate, toolCallStartedUpdate, type ToolInteractionUpdate } from "../tools/cards.ts";
import { withReadPaths } from "../tools/files.ts";
import { planToolCall } from "../tools/plan-tool-call.ts";
import type { ToolOutcome, ToolPlanContext } from "../tools/types.ts";
import type { ExecWire, WireProgress } from "./exec-wire.ts";
import { ToolRoundLedger, type ToolResultInit, type ToolRound } from "@byok/run-client";

export interface ToolRoundDriverPorts {
  conversationId: string;
  setup: RunToolSetup;
  /** Files Read earlier in the conversation (the client's checkpoint). */
  readPaths: readonly string[];
  wire: ExecWire;
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
}

type RoundState = ToolRound<RoundInfo, ToolOutcome>;

export class ToolRoundDriver {
  readonly #ports: ToolRoundDriverPorts;
  readonly #rounds: ToolRoundLedger<RoundInfo, ToolOutcome>;
  readonly #allowedToolNames: ReadonlySet<string>;
  #readPaths: string[];
  #todos: tools.TodoItem[];
  #todosChanged = false;
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
    return this.#round(roundId, calls).info;
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

  /** The conversation's todo list when a TodoWrite changed it in this run; undefined otherwise. */
  get changedTodos(): readonly tools.TodoItem[] | undefined {
    return this.#todosChanged ? this.#todos : undefined;
  }

  #startTimeOf(calls: readonly ToolCallPart[]): number {
    const resumed = this.#ports.setup.resumedRound;
    if (resumed !== undefined && !this.#resumedRoundUsed && sameIds(resumed.callIds, calls.map((c) => c.callId))) {
      this.#resumedRoundUsed = true;
      return resumed.startedAtMs ?? this.#ports.now();
    }
    return this.#ports.now();
  }

  #round(roundId: string, calls: readonly ToolCallPart[]): RoundState {
    return this.#rounds.round(roundId, calls, () => ({ startedAtMs: this.#startTimeOf(calls) }));
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
        wire.startQuery(call.callId, plan.query, plan.onResponse, onProgress);
        return;
      case "server":
        wire.later(plan.delayMs, () => this.#complete(round, call.callId, modelCallId, plan.complete()));
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

  #planContext(round: RoundState): ToolPlanContext {
    const { setup } = this.#ports;
    return {
      conversationId: this.#ports.conversationId,
      terminalsFolder: setup.terminalsFolder,
      allowedToolNames: this.#allowedToolNames,
      mcp: setup.mcp,
      todos: this.#todos,
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
