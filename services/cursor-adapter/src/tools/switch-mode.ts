/**
 * SwitchMode: the model asks to move the conversation to another mode (plan
 * <-> agent, also ask and debug). An interaction query: the user approves or
 * declines, and that answer is the tool result. An approved switch becomes the
 * conversation's mode in the checkpoint; its manifest and prompt apply from
 * the next run (this run's tools stay frozen).
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { InteractionProgress, InteractionReply, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

/** Modes a conversation can be switched to (prompt modes a member can pick). */
export const SWITCHABLE_MODES = ["agent", "plan", "ask", "debug"] as const;

export function planSwitchMode(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("SwitchMode", args);
  const requested = reader.requiredString("target_mode_id").trim();
  const target = requested.toLowerCase();
  const explanation = reader.optionalString("explanation")?.trim();
  if (requested !== "" && !(SWITCHABLE_MODES as readonly string[]).includes(target)) {
    reader.problem(`mode ${JSON.stringify(requested)} does not exist; use one of ${SWITCHABLE_MODES.join(", ")}`);
  } else if (target === ctx.mode) {
    reader.problem(`the conversation is already in ${target} mode`);
  }
  const switchArgs = create(tools.SwitchModeArgsSchema, { targetModeId: target, toolCallId: call.callId, ...(explanation ? { explanation } : {}) });
  const started = startedCard(call.callId, switchVariant(switchArgs), ctx);
  const error = reader.error();
  if (error !== undefined) {
    const result = create(tools.SwitchModeResultSchema, { result: { case: "error", value: { error } } });
    return { kind: "invalid", error, started, outcome: toolOutcome(call.callId, switchVariant(switchArgs, result), ctx, error, true) };
  }
  return {
    kind: "interaction",
    started,
    query: { case: "switchModeRequestQuery", value: create(tools.SwitchModeRequestQuerySchema, { args: switchArgs }) },
    onResponse: (reply: InteractionReply): InteractionProgress => {
      if (reply.case !== "switchModeRequestResponse") {
        return { kind: "protocol_error", message: `SwitchMode answered with ${reply.case ?? "an empty interaction response"}` };
      }
      const answer = reply.value.result;
      switch (answer.case) {
        case "approved": {
          const result = create(tools.SwitchModeResultSchema, { result: { case: "success", value: { fromModeId: ctx.mode, toModeId: target } } });
          const content =
            `The user approved switching from ${ctx.mode} to ${target} mode. ${target} mode's instructions and tools apply from the user's next message; ` +
            "finish this response without starting work that belongs to the new mode.";
          return { kind: "done", outcome: toolOutcome(call.callId, switchVariant(switchArgs, result), ctx, content, false, [{ kind: "mode", mode: target }]) };
        }
        case "rejected":
        case undefined: {
          const reason = answer.case === "rejected" ? answer.value.reason.trim() : "";
          const result = create(tools.SwitchModeResultSchema, { result: { case: "rejected", value: { reason } } });
          const content = `The user declined switching to ${target} mode${reason === "" ? "" : `: ${reason}`}. Stay in ${ctx.mode} mode.`;
          return { kind: "done", outcome: toolOutcome(call.callId, switchVariant(switchArgs, result), ctx, content, false) };
        }
        default: {
          const unreachable: never = answer;
          throw new Error(`unknown SwitchMode answer ${String(unreachable)}`);
        }
      }
    },
  };
}

function switchVariant(args: tools.SwitchModeArgs, result?: tools.SwitchModeResult): ToolVariant {
  return { case: "switchModeToolCall", value: create(tools.SwitchModeToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}
