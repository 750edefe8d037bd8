/**
 * The IDE's side of sub-agents (cursor-agent-protocol §10): on a parent's
 * exec `subagent_args` it starts the child as its own run (new request id and
 * conversation, the parent headers on RunSSE and every BidiAppend, the prompt
 * as the user message, subagent_type_name, conversation_group_id), and answers
 * the parent:
 * - foreground: after the child ended, subagent_result.success with the
 *   child's final text (error when the child failed);
 * - background: at once with the agent id; once the child ended and the
 *   parent conversation is idle, a new parent run whose action is
 *   background_task_completion_action.
 *
 *   const subagents = new SubagentRunner(client, { onExec: childExecs });
 *   chat.send("...", { modelId, onExec: { subagentArgs: subagents.handler(chat) } });
 */
import { randomUUID } from "node:crypto";
import { agent, type tools } from "@byok/cursor-protocol";
import type { FakeConversation, FakeCursorClient, TurnOptions } from "./client.ts";
import type { ExecContext, ExecHandler, ExecHandlers, QueryHandler } from "./exec.ts";
import type { CursorRun, RunResult } from "./run.ts";

export const PARENT_REQUEST_ID_HEADER = "x-parent-request-id";
export const ROOT_PARENT_REQUEST_ID_HEADER = "x-root-parent-request-id";
export const PARENT_TOOL_CALL_ID_HEADER = "x-parent-agent-tool-call-id";

export interface SubagentRunnerOptions {
  /** How the IDE answers the child's execs and queries. */
  onExec?: ExecHandlers;
  onQuery?: QueryHandler;
  /** Extra options of every child turn (env, heartbeat, ...). */
  turn?: Omit<TurnOptions, "onExec" | "onQuery" | "headers" | "subagent" | "modelId">;
}

export interface ChildRecord {
  readonly agentId: string;
  readonly parentRequestId: string;
  readonly toolCallId: string;
  readonly args: tools.SubagentArgs;
  readonly background: boolean;
  readonly run: CursorRun;
  readonly conversation: FakeConversation;
  /** The child's result once it ended. */
  result?: RunResult;
}

export interface CompletionRecord {
  readonly agentId: string;
  readonly run: CursorRun;
}

export class SubagentRunner {
  readonly #client: FakeCursorClient;
  readonly #options: SubagentRunnerOptions;
  readonly children: ChildRecord[] = [];
  readonly completions: CompletionRecord[] = [];
  readonly #completionOf = new Map<string, () => CursorRun>();

  constructor(client: FakeCursorClient, options: SubagentRunnerOptions = {}) {
    this.#client = client;
    this.#options = options;
  }

  /** The exec handler for `subagentArgs` on runs of `parent`. */
  handler(parent: FakeConversation): ExecHandler {
    return (ctx) => this.#start(parent, ctx);
  }

  /** Resolves with the child of tool call `toolCallId` once it has started. */
  async child(toolCallId: string): Promise<ChildRecord> {
    for (;;) {
      const found = this.children.find((c) => c.toolCallId === toolCallId);
      if (found !== undefined) return found;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Sends a background child's completion again (the IDE retrying it); the new run. */
  resendCompletion(agentId: string): CursorRun {
    const send = this.#completionOf.get(agentId);
    if (send === undefined) throw new Error(`no completion was sent for sub-agent ${agentId}`);
    return send();
  }

  async #start(parent: FakeConversation, ctx: ExecContext): Promise<void> {
    if (ctx.exec.message.case !== "subagentArgs") throw new Error(`subagent runner got ${ctx.kind}`);
    const args = ctx.exec.message.value;
    const conversation = this.#client.conversation();
    const agentId = conversation.id;
    const root = ctx.runHeaders[ROOT_PARENT_REQUEST_ID_HEADER] ?? ctx.runHeaders[PARENT_REQUEST_ID_HEADER] ?? ctx.requestId;
    const run = conversation.send(args.prompt, {
      ...this.#options.turn,
      modelId: args.modelId,
      requestId: randomUUID(),
      headers: { [PARENT_REQUEST_ID_HEADER]: ctx.requestId, [ROOT_PARENT_REQUEST_ID_HEADER]: root, [PARENT_TOOL_CALL_ID_HEADER]: args.toolCallId },
      subagent: { typeName: args.subagentType, conversationGroupId: args.rootParentConversationId ?? parent.id },
      ...(this.#options.onExec === undefined ? {} : { onExec: this.#options.onExec }),
      ...(this.#options.onQuery === undefined ? {} : { onQuery: this.#options.onQuery }),
    });
    const background = args.runInBackground === true;
    const record: ChildRecord = { agentId, parentRequestId: ctx.requestId, toolCallId: args.toolCallId, args, background, run, conversation };
    this.children.push(record);
    if (background) {
      await ctx.reply({ message: { case: "subagentResult", value: { result: { case: "success", value: { agentId, backgroundReason: 1 } } } } });
      const result = await run.finished;
      record.result = result;
      await parent.idle();
      // A retry sends the very same request again: the same completion from the same conversation state.
      const state = parent.state;
      const send = (): CursorRun => {
        const completion = parent.completeBackground(
          [
          {
            taskId: agentId,
            kind: agent.BackgroundTaskKind.SUBAGENT,
            status: result.end.kind === "ok" ? agent.BackgroundTaskStatus.SUCCESS : agent.BackgroundTaskStatus.ERROR,
            title: args.prompt.slice(0, 60),
            detail: result.text,
            reason: agent.BackgroundTaskCompletionReason.TASK_FINISHED,
            subagentId: agentId,
            toolCallId: args.toolCallId,
          },
          ],
          { ...(parent.lastModelId === undefined ? {} : { modelId: parent.lastModelId }) },
          state,
        );
        this.completions.push({ agentId, run: completion });
        return completion;
      };
      this.#completionOf.set(agentId, send);
      send();
      return;
    }
    const result = await run.finished;
    record.result = result;
    if (result.end.kind !== "ok") {
      await ctx.reply({ message: { case: "subagentResult", value: { result: { case: "error", value: { agentId, error: `the sub-agent run ended: ${JSON.stringify(result.end)}` } } } } });
      return;
    }
    const toolCallCount = result.timeline.filter(
      (e) => e.kind === "frame" && e.message.message.case === "interactionUpdate" && e.message.message.value.message.case === "toolCallCompleted",
    ).length;
    await ctx.reply({ message: { case: "subagentResult", value: { result: { case: "success", value: { agentId, finalMessage: result.text, toolCallCount } } } } });
  }
}
