/** SwitchMode, CreatePlan and UpdateCurrentStep: the interaction and server-local tools of plan mode and sub-agents. */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { invalidOf, testContext, variantOf } from "./tool-test-support.ts";
import type { InteractionProgress, ToolPlan, ToolPlanContext } from "./types.ts";

/** Plans the call with `name` among the run's tools (CreatePlan is a plan-mode tool, UpdateCurrentStep a sub-agent tool). */
function plan(name: string, args: object, overrides: Partial<ToolPlanContext> = {}): ToolPlan {
  return planToolCall({ callId: `call_${name}`, name, argumentsJson: JSON.stringify(args) }, testContext({ allowedToolNames: new Set([name]), ...overrides }));
}

function interaction(p: ToolPlan) {
  if (p.kind !== "interaction") throw new Error(p.kind);
  return p;
}

function done(progress: InteractionProgress) {
  if (progress.kind !== "done") throw new Error(progress.kind);
  return progress.outcome;
}

describe("SwitchMode", () => {
  it("asks the user; an approval switches the conversation's mode from the next run on", () => {
    const p = interaction(plan("SwitchMode", { target_mode_id: "Plan", explanation: "Large refactor" }));
    expect(p.query).toMatchObject({ case: "switchModeRequestQuery", value: { args: { targetModeId: "plan", explanation: "Large refactor", toolCallId: "call_SwitchMode" } } });
    const approved = done(p.onResponse({ case: "switchModeRequestResponse", value: create(tools.SwitchModeRequestResponseSchema, { result: { case: "approved", value: {} } }) }));
    expect(approved.effects).toEqual([{ kind: "mode", mode: "plan" }]);
    expect(approved.content).toMatch(/approved switching from agent to plan mode.*from the user's next message/);
    expect(variantOf(approved.toolCall, "switchModeToolCall").result?.result).toMatchObject({ case: "success", value: { fromModeId: "agent", toModeId: "plan" } });
  });

  it("reports a declined switch to the model without changing the mode", () => {
    const p = interaction(plan("SwitchMode", { target_mode_id: "plan" }));
    const declined = done(p.onResponse({ case: "switchModeRequestResponse", value: create(tools.SwitchModeRequestResponseSchema, { result: { case: "rejected", value: { reason: "not now" } } }) }));
    expect(declined).toMatchObject({ isError: false, effects: [], content: "The user declined switching to plan mode: not now. Stay in agent mode." });
    expect(variantOf(declined.toolCall, "switchModeToolCall").result?.result.case).toBe("rejected");
  });

  it("refuses a mode that does not exist and the mode the conversation is in", () => {
    expect(invalidOf(plan("SwitchMode", { target_mode_id: "yolo" })).error).toBe('Invalid arguments for SwitchMode: mode "yolo" does not exist; use one of agent, plan, ask, debug.');
    expect(invalidOf(plan("SwitchMode", { target_mode_id: "agent" })).error).toMatch(/already in agent mode/);
    expect(invalidOf(plan("SwitchMode", {})).error).toMatch(/"target_mode_id" is required/);
  });
});

describe("CreatePlan", () => {
  const ARGS = { name: "Cache", overview: "Add a cache", plan: "# Cache\n\n1. Add it", todos: [{ id: "a", content: "Add the cache" }, { id: "b", content: "Test it" }] };

  it("shows the plan with its todos; the answer is the result, the plan and its steps go into the conversation", () => {
    const p = interaction(plan("CreatePlan", ARGS));
    expect(p.query.case).toBe("createPlanRequestQuery");
    expect(p.query.value).toMatchObject({ toolCallId: "call_CreatePlan", args: { name: "Cache", plan: "# Cache\n\n1. Add it", todos: [{ id: "a", status: tools.TodoStatus.PENDING }, { id: "b" }] } });
    const outcome = done(p.onResponse({ case: "createPlanRequestResponse", value: create(tools.CreatePlanRequestResponseSchema, { result: { planUri: "file:///plans/cache.md", result: { case: "success", value: {} } } }) }));
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toMatch(/shown to the user and saved as file:\/\/\/plans\/cache\.md\. Its 2 steps are the conversation's todo list now/);
    const effect = outcome.effects[0];
    if (effect?.kind !== "plan") throw new Error("no plan effect");
    expect(effect.markdown).toBe("# Cache\n\n1. Add it");
    expect(effect.todos.map((t) => [t.id, t.content])).toEqual([["a", "Add the cache"], ["b", "Test it"]]);
  });

  it("passes a client-side error on and refuses a plan without text or with broken todos", () => {
    const p = interaction(plan("CreatePlan", ARGS));
    const failed = done(p.onResponse({ case: "createPlanRequestResponse", value: create(tools.CreatePlanRequestResponseSchema, { result: { result: { case: "error", value: { error: "disk full" } } } }) }));
    expect(failed).toMatchObject({ isError: true, content: "The plan could not be created: disk full", effects: [] });
    expect(invalidOf(plan("CreatePlan", { plan: "" })).error).toMatch(/"plan" must not be empty/);
    expect(invalidOf(plan("CreatePlan", { plan: "# P", todos: [{ id: "a" }, { id: "a", content: "x" }] })).error).toMatch(/todos\[0\] needs a non-empty id and content/);
  });
});

describe("UpdateCurrentStep", () => {
  it("runs in the gateway and numbers the steps of the run", async () => {
    const p = plan("UpdateCurrentStep", { current_step: "Reading the parser" }, { stepUpdates: 2 });
    if (p.kind !== "server") throw new Error(p.kind);
    const outcome = await p.complete();
    expect(outcome.effects).toEqual([{ kind: "step_update" }]);
    expect(variantOf(outcome.toolCall, "communicateUpdateToolCall")).toMatchObject({
      args: { currentStep: "Reading the parser" },
      result: { result: { case: "success", value: { currentStep: "Reading the parser", messageIndex: 3 } } },
    });
  });

  it("needs a current step or a final summary", () => {
    expect(invalidOf(plan("UpdateCurrentStep", {})).error).toMatch(/give "current_step"/);
  });
});
