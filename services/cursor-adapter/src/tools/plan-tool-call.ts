/**
 * planToolCall: one complete model tool call -> what the session does with it.
 * Unknown tools and unusable arguments become an error result for the model
 * (kind "invalid"), never an exception.
 */
import { planAskQuestion } from "./ask-question.ts";
import { planAwaitShell } from "./await-shell.ts";
import { emptyVariant, isStaticToolName, startedCard, toolOutcome, type StaticToolName } from "./cards.ts";
import { planCreatePlan } from "./create-plan.ts";
import { planEditNotebook } from "./edit-notebook.ts";
import { planStrReplace, planWrite } from "./edit-tools.ts";
import { withErrorResult } from "./error-cards.ts";
import { planDelete, planRead } from "./files.ts";
import { planReadLints } from "./lints.ts";
import { planCallMcpTool, planDynamicMcpTool, planFetchMcpResource, planGetMcpTools } from "./mcp.ts";
import { planGlob, planGrep } from "./search.ts";
import { planShell } from "./shell.ts";
import { planSwitchMode } from "./switch-mode.ts";
import { planTask } from "./task.ts";
import { planTodoWrite } from "./todos.ts";
import { parseToolArgs, type ToolArgs } from "./tool-args.ts";
import { planUpdateCurrentStep } from "./update-current-step.ts";
import { planWebFetch } from "./web-fetch.ts";
import { planWebSearch } from "./web-search.ts";
import type { ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

type Planner = (call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext) => ToolPlan;

const PLANNERS: Record<StaticToolName, Planner> = {
  Shell: planShell,
  AwaitShell: planAwaitShell,
  Read: planRead,
  Write: planWrite,
  StrReplace: planStrReplace,
  Delete: planDelete,
  Grep: planGrep,
  Glob: planGlob,
  ReadLints: planReadLints,
  TodoWrite: planTodoWrite,
  CallMcpTool: planCallMcpTool,
  GetMcpTools: planGetMcpTools,
  FetchMcpResource: planFetchMcpResource,
  AskQuestion: planAskQuestion,
  EditNotebook: planEditNotebook,
  Task: planTask,
  UpdateCurrentStep: planUpdateCurrentStep,
  SwitchMode: planSwitchMode,
  CreatePlan: planCreatePlan,
  WebSearch: planWebSearch,
  WebFetch: planWebFetch,
};

export function planToolCall(call: ToolCallInput, ctx: ToolPlanContext): ToolPlan {
  const allowed = ctx.allowedToolNames.has(call.name);
  const dynamicRoute = allowed && !isStaticToolName(call.name) ? ctx.mcp.dynamic(call.name) : undefined;
  if (!allowed || (!isStaticToolName(call.name) && dynamicRoute === undefined)) {
    const names = [...ctx.allowedToolNames].join(", ");
    return invalid(call, ctx, { case: undefined }, `Tool ${call.name} is not available. Available tools: ${names}.`);
  }
  const parsed = parseToolArgs(call.name, call.argumentsJson);
  if (parsed.kind === "invalid") return invalid(call, ctx, emptyVariant(call.name, dynamicRoute !== undefined), parsed.error);
  if (dynamicRoute !== undefined) return planDynamicMcpTool(call, parsed.args, dynamicRoute, ctx);
  if (!isStaticToolName(call.name)) throw new Error(`unreachable: ${call.name} has no planner`);
  return PLANNERS[call.name](call, parsed.args, ctx);
}

/** An error result on the tool's own card (no card variant for a tool we do not know). */
function invalid(call: ToolCallInput, ctx: ToolPlanContext, variant: ToolVariant, error: string): ToolPlan {
  return {
    kind: "invalid",
    error,
    started: startedCard(call.callId, variant, ctx),
    outcome: toolOutcome(call.callId, withErrorResult(variant, error), ctx, error, true),
  };
}
