/**
 * Task: a sub-agent. The gateway sends subagent_args; the client starts the
 * child as its own run (with the parent headers, so the store links it) and
 * answers with subagent_result: the child's final message (foreground), or at
 * once with the agent id when the child runs in the background (its completion
 * comes back later as a new run of this conversation).
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { singleStepExec } from "./single-step.ts";
import { BUILTIN_SUBAGENT_TYPES, isBuiltinSubagentType, type SubagentSetup } from "./subagent-setup.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { ExecStep, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

export function planTask(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("Task", args);
  const description = reader.requiredString("description").trim();
  const prompt = reader.requiredString("prompt");
  const requestedType = reader.optionalString("subagent_type")?.trim() || "generalPurpose";
  const background = reader.optionalBoolean("run_in_background") ?? false;
  const resume = reader.optionalString("resume")?.trim();
  const setup = ctx.subagents;
  if (setup === undefined) reader.problem("sub-agents are disabled for this model");
  else if (!isBuiltinSubagentType(requestedType) && !setup.customTypes.has(requestedType)) {
    reader.problem(`unknown subagent_type ${JSON.stringify(requestedType)}; use one of ${knownTypes(setup).join(", ")}`);
  }
  const taskArgs = create(tools.TaskArgsSchema, {
    description,
    prompt,
    subagentType: cardType(requestedType),
    ...(setup === undefined ? {} : { model: setup.modelId }),
    ...(resume === undefined ? {} : { resume }),
    mode: tools.TaskMode.AGENT,
    environment: tools.SubagentExecutionEnvironment.LOCAL,
  });
  const started = startedCard(call.callId, taskVariant(taskArgs), ctx);
  const failed = (error: string) => toolOutcome(call.callId, taskVariant(taskArgs, taskError(error)), ctx, error, true);
  const error = reader.error();
  if (error !== undefined || setup === undefined) {
    const message = error ?? "Invalid arguments for Task.";
    return { kind: "invalid", error: message, started, outcome: failed(message) };
  }
  const subagentArgs = create(tools.SubagentArgsSchema, {
    toolCallId: call.callId,
    subagentType: requestedType,
    modelId: setup.modelId,
    prompt,
    readonly: requestedType === "explore",
    ...(resume === undefined ? {} : { resumeAgentId: resume }),
    runInBackground: background,
    parentConversationId: ctx.conversationId,
    rootParentConversationId: setup.rootConversationId,
    mode: tools.TaskMode.AGENT,
    environment: tools.SubagentExecutionEnvironment.LOCAL,
  });
  const first: ExecStep = { request: { case: "subagentArgs", value: subagentArgs }, delayMs: 0 };
  return {
    kind: "exec",
    started,
    exec: singleStepExec(
      first,
      "subagentResult",
      (reply) => {
        const r = reply.result;
        switch (r.case) {
          case "success":
            return successParts(r.value, description, background, ctx);
          case "error": {
            const content = `The sub-agent${r.value.agentId ? ` ${r.value.agentId}` : ""} failed: ${r.value.error || "no reason given"}`;
            return { result: taskError(content), content, isError: true, effects: [] };
          }
          case undefined: {
            const content = "The sub-agent ended without a result.";
            return { result: taskError(content), content, isError: true, effects: [] };
          }
          default: {
            const unreachable: never = r;
            throw new Error(`unknown sub-agent result ${String(unreachable)}`);
          }
        }
      },
      {
        finish: (parts) => toolOutcome(call.callId, taskVariant(taskArgs, parts.result), ctx, parts.content, parts.isError),
        failed,
      },
    ),
  };
}

function successParts(success: tools.SubagentSuccess, description: string, background: boolean, ctx: ToolPlanContext) {
  const agentId = success.agentId;
  const inBackground = background || (success.backgroundReason !== tools.SubagentBackgroundReason.UNSPECIFIED && success.finalMessage === undefined);
  const result = create(tools.TaskResultSchema, {
    result: {
      case: "success",
      value: {
        ...(agentId === "" ? {} : { agentId }),
        isBackground: inBackground,
        backgroundReason: success.backgroundReason,
        ...(success.transcriptPath === undefined ? {} : { transcriptPath: success.transcriptPath }),
        ...(inBackground ? {} : { durationMs: BigInt(Math.max(0, Math.trunc(ctx.now() - ctx.startedAtMs))) }),
      },
    },
  });
  if (inBackground) {
    const content =
      `Sub-agent ${agentId || "(no id)"} is working on "${description}" in the background. ` +
      "Its report arrives as a new message when it finishes: go on with other work or end your response; do not wait for it.";
    return { result, content, isError: false, effects: [] };
  }
  const report = success.finalMessage?.trim() || "(The sub-agent finished without a final message.)";
  const calls = success.toolCallCount === 1 ? "1 tool call" : `${success.toolCallCount} tool calls`;
  const footer = agentId === "" ? `(Sub-agent finished after ${calls}.)` : `(Sub-agent ${agentId} finished after ${calls}; pass resume: "${agentId}" to Task to continue its work.)`;
  return { result, content: `${report}\n\n${footer}`, isError: false, effects: [] };
}

function knownTypes(setup: SubagentSetup): string[] {
  return [...BUILTIN_SUBAGENT_TYPES, ...[...setup.customTypes.keys()].sort()];
}

/** The card shows generalPurpose as `unspecified`; custom sub-agents by name. */
function cardType(name: string): tools.SubagentType {
  const type: MessageInitShape<typeof tools.SubagentTypeSchema>["type"] =
    name === "generalPurpose"
      ? { case: "unspecified", value: {} }
      : name === "explore"
        ? { case: "explore", value: {} }
        : name === "shell"
          ? { case: "shell", value: {} }
          : { case: "custom", value: { name } };
  return create(tools.SubagentTypeSchema, { type });
}

function taskVariant(args: tools.TaskArgs, result?: tools.TaskResult): ToolVariant {
  return { case: "taskToolCall", value: create(tools.TaskToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

function taskError(error: string): tools.TaskResult {
  return create(tools.TaskResultSchema, { result: { case: "error", value: { error } } });
}
