/**
 * CreatePlan (plan mode): the plan as Markdown plus its steps as todos, shown
 * to the user through an interaction query; the client's answer is the tool
 * result. An accepted plan becomes the checkpoint's `plan` and its steps the
 * conversation's todo list.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, isJsonObject, type ToolArgs } from "./tool-args.ts";
import type { InteractionProgress, InteractionReply, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

export function planCreatePlan(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("CreatePlan", args);
  const plan = reader.requiredString("plan");
  const name = reader.optionalString("name")?.trim() ?? "";
  const overview = reader.optionalString("overview")?.trim() ?? "";
  const rawTodos = reader.optionalArray("todos") ?? [];
  const now = BigInt(Math.max(0, Math.trunc(ctx.now())));
  const todos = rawTodos.flatMap((raw, i): tools.TodoItem[] => {
    const id = isJsonObject(raw) && (typeof raw["id"] === "string" || typeof raw["id"] === "number") ? String(raw["id"]).trim() : "";
    const content = isJsonObject(raw) && typeof raw["content"] === "string" ? raw["content"].trim() : "";
    if (id === "" || content === "") {
      reader.problem(`todos[${i}] needs a non-empty id and content`);
      return [];
    }
    return [create(tools.TodoItemSchema, { id, content, status: tools.TodoStatus.PENDING, createdAt: now, updatedAt: now })];
  });
  if (new Set(todos.map((t) => t.id)).size !== todos.length) reader.problem("todo ids must be unique");
  const planArgs = create(tools.CreatePlanArgsSchema, { plan, todos, overview, name });
  const started = startedCard(call.callId, planVariant(planArgs), ctx);
  const error = reader.error();
  if (error !== undefined) {
    const result = create(tools.CreatePlanResultSchema, { result: { case: "error", value: { error } } });
    return { kind: "invalid", error, started, outcome: toolOutcome(call.callId, planVariant(planArgs, result), ctx, error, true) };
  }
  return {
    kind: "interaction",
    started,
    query: { case: "createPlanRequestQuery", value: create(tools.CreatePlanRequestQuerySchema, { args: planArgs, toolCallId: call.callId }) },
    onResponse: (reply: InteractionReply): InteractionProgress => {
      if (reply.case !== "createPlanRequestResponse") {
        return { kind: "protocol_error", message: `CreatePlan answered with ${reply.case ?? "an empty interaction response"}` };
      }
      const result = reply.value.result ?? create(tools.CreatePlanResultSchema, { result: { case: "success", value: {} } });
      if (result.result.case === "error") {
        const content = `The plan could not be created: ${result.result.value.error || "no reason given"}`;
        return { kind: "done", outcome: toolOutcome(call.callId, planVariant(planArgs, result), ctx, content, true) };
      }
      const where = result.planUri === "" ? "" : ` and saved as ${result.planUri}`;
      const steps = todos.length === 0 ? "" : ` Its ${todos.length} steps are the conversation's todo list now.`;
      const content = `The plan was shown to the user${where}.${steps} The user reviews it and decides when to build it; end your response with a short summary of the plan.`;
      const effects = [{ kind: "plan" as const, markdown: plan, todos }];
      return { kind: "done", outcome: toolOutcome(call.callId, planVariant(planArgs, result), ctx, content, false, effects) };
    },
  };
}

function planVariant(args: tools.CreatePlanArgs, result?: tools.CreatePlanResult): ToolVariant {
  return { case: "createPlanToolCall", value: create(tools.CreatePlanToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}
