import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, type TestClock } from "./tool-test-support.ts";
import type { ToolPlanContext } from "./types.ts";

function task(args: object, ctx: ToolPlanContext = testContext()) {
  return planToolCall({ callId: "call_task", name: "Task", argumentsJson: JSON.stringify(args) }, ctx);
}

describe("Task", () => {
  it("sends subagent_args with the child model of the policy, the prompt and the conversations of the tree", () => {
    const plan = task({ description: "Find the parser", prompt: "Locate the config parser and report its path.", subagent_type: "explore" });
    const exec = execOf(plan);
    expect(exec.first.request.case).toBe("subagentArgs");
    expect(exec.first.request.value).toMatchObject({
      toolCallId: "call_task",
      subagentType: "explore",
      modelId: "byok-child",
      prompt: "Locate the config parser and report its path.",
      readonly: true,
      runInBackground: false,
      parentConversationId: "conv-1",
      rootParentConversationId: "conv-1",
      mode: tools.TaskMode.AGENT,
    });
    const card = variantOf(plan.started, "taskToolCall");
    expect(card.args).toMatchObject({ description: "Find the parser", model: "byok-child", subagentType: { type: { case: "explore" } } });
  });

  it("returns the child's final message as the result; the card says success with the agent id and duration", () => {
    const clock: TestClock = { now: 1_000 };
    const ctx = testContext({ clock });
    const exec = execOf(task({ description: "Review", prompt: "Review the diff", subagent_type: "reviewer" }, ctx));
    clock.now = 4_500;
    const outcome = doneOf(
      exec.onReply({ case: "subagentResult", value: { $typeName: "agent.v1.SubagentResult", result: { case: "success", value: { $typeName: "agent.v1.SubagentSuccess", agentId: "agent-7", finalMessage: "Two issues: ...", toolCallCount: 3, backgroundReason: tools.SubagentBackgroundReason.UNSPECIFIED } } } }),
    );
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toMatch(/^Two issues: \.\.\.\n\n\(Sub-agent agent-7 finished after 3 tool calls; pass resume: "agent-7"/);
    const card = variantOf(outcome.toolCall, "taskToolCall");
    expect(card.args?.subagentType?.type).toEqual({ case: "custom", value: expect.objectContaining({ name: "reviewer" }) });
    expect(card.result?.result).toMatchObject({ case: "success", value: { agentId: "agent-7", isBackground: false, durationMs: 3_500n } });
  });

  it("tells the model a background sub-agent reports later, and passes a child's error on as a tool error", () => {
    const background = doneOf(
      execOf(task({ description: "Long job", prompt: "Run the slow suite", run_in_background: true })).onReply({
        case: "subagentResult",
        value: { $typeName: "agent.v1.SubagentResult", result: { case: "success", value: { $typeName: "agent.v1.SubagentSuccess", agentId: "bg-1", toolCallCount: 0, backgroundReason: tools.SubagentBackgroundReason.AGENT_REQUEST } } },
      }),
    );
    expect(background.content).toMatch(/Sub-agent bg-1 is working on "Long job" in the background/);
    expect(variantOf(background.toolCall, "taskToolCall").result?.result).toMatchObject({ case: "success", value: { isBackground: true } });
    expect(execOf(task({ description: "x", prompt: "y", run_in_background: true })).first.request.value).toMatchObject({ runInBackground: true });

    const failed = doneOf(
      execOf(task({ description: "x", prompt: "y" })).onReply({
        case: "subagentResult",
        value: { $typeName: "agent.v1.SubagentResult", result: { case: "error", value: { $typeName: "agent.v1.SubagentError", agentId: "a1", error: "model refused" } } },
      }),
    );
    expect(failed).toMatchObject({ isError: true, content: "The sub-agent a1 failed: model refused" });
  });

  it("gives the model a clear error for an unknown sub-agent type, missing fields, or sub-agents turned off", () => {
    expect(invalidOf(task({ description: "x", prompt: "y", subagent_type: "wizard" })).error).toBe(
      'Invalid arguments for Task: unknown subagent_type "wizard"; use one of generalPurpose, explore, shell, reviewer.',
    );
    expect(invalidOf(task({ prompt: "y" })).error).toMatch(/"description" is required/);
    const off = invalidOf(task({ description: "x", prompt: "y" }, testContext({ subagents: undefined })));
    expect(off.error).toMatch(/sub-agents are disabled/);
    expect(variantOf(off.outcome.toolCall, "taskToolCall").result?.result.case).toBe("error");
  });
});
