/**
 * UpdateCurrentStep (sub-agents only): the child tells its parent what it is
 * doing. Runs in the gateway (started + completed back to back); the result
 * numbers the step within the run.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const MAX_STEP_CHARS = 500;

export function planUpdateCurrentStep(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("UpdateCurrentStep", args);
  const currentStep = reader.optionalString("current_step")?.trim();
  const completedSubtitle = reader.optionalString("completed_subtitle")?.trim();
  const finalSummary = reader.optionalString("final_summary")?.trim();
  if (!currentStep && !finalSummary) reader.problem(`give "current_step" (what you are doing now) or "final_summary" (when you are done)`);
  if ((currentStep?.length ?? 0) > MAX_STEP_CHARS) reader.problem(`"current_step" must be at most ${MAX_STEP_CHARS} characters`);
  const stepArgs = create(tools.CommunicateUpdateArgsSchema, {
    ...(currentStep ? { currentStep } : {}),
    ...(completedSubtitle ? { completedSubtitle } : {}),
    ...(finalSummary ? { finalSummary } : {}),
  });
  const started = startedCard(call.callId, stepVariant(stepArgs), ctx);
  const error = reader.error();
  if (error !== undefined) {
    const result = create(tools.CommunicateUpdateResultSchema, { result: { case: "error", value: { error } } });
    return { kind: "invalid", error, started, outcome: toolOutcome(call.callId, stepVariant(stepArgs, result), ctx, error, true) };
  }
  const index = ctx.stepUpdates + 1;
  const shown = currentStep || finalSummary || "";
  return {
    kind: "server",
    started,
    delayMs: 0,
    complete: () => {
      const result = create(tools.CommunicateUpdateResultSchema, { result: { case: "success", value: { currentStep: shown, messageIndex: index } } });
      const content = finalSummary ? `Final summary recorded (update ${index}).` : `Progress shown to the parent agent (update ${index}).`;
      return toolOutcome(call.callId, stepVariant(stepArgs, result), ctx, content, false, [{ kind: "step_update" }]);
    },
  };
}

function stepVariant(args: tools.CommunicateUpdateArgs, result?: tools.CommunicateUpdateResult): ToolVariant {
  return { case: "communicateUpdateToolCall", value: create(tools.CommunicateUpdateToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}
