/**
 * End to end: mode switches and plans. SwitchMode and CreatePlan are
 * interaction queries whose answers are the tool results; an approved switch
 * becomes the conversation's mode in the checkpoint, and the next run uses
 * that mode's prompt and tools; an accepted plan becomes the checkpoint's
 * plan and its steps the todo list; "Build" (execute_plan_action) then runs
 * the plan in agent mode. A mode that does not exist is a tool error for the
 * model, and the run goes on.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { agent, tools } from "@byok/cursor-protocol";
import { queryAnswers } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { afterLastUser, chatMessages, systemText, textOf, toolNames } from "@byok/test-support/chat-requests";
import { completedCard, enqueueChat, finishedOk, toolUpdates } from "./tools-support.ts";

describe("plan mode and mode switches end to end", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("SwitchMode to plan (approved), then CreatePlan in plan mode, then a declined switch and a mode that does not exist", async () => {
    const chat = gw.client().conversation();

    // ---- turn 1 (agent mode): the model proposes plan mode; the user approves ----
    enqueueChat(gw, { id: "chatcmpl-mode-1", calls: [{ id: "call_switch", name: "SwitchMode", args: { target_mode_id: "plan", explanation: "This needs a design first." } }] });
    enqueueChat(gw, { id: "chatcmpl-mode-2", text: "Let's plan this first." });
    const switching = queryAnswers({ switchMode: "approve" });
    const first = await finishedOk(chat.send("Add caching to the API.", { modelId: gw.modelId, onQuery: switching.handler }));
    expect(first.violations, first.describe()).toEqual([]);
    expect(switching.received.map((q) => q.query.case)).toEqual(["switchModeRequestQuery"]);
    const asked = switching.received[0]!.query;
    expect(asked.case === "switchModeRequestQuery" && asked.value.args).toMatchObject({ targetModeId: "plan", explanation: "This needs a design first.", toolCallId: "call_switch" });
    // Order: started card, query, completed card.
    const queryOrder = first.timeline.find((e) => e.kind === "frame" && e.label.startsWith("query#"))!.order;
    const switchCards = toolUpdates(first).filter((u) => u.callId === "call_switch");
    expect(switchCards.find((u) => u.case === "toolCallStarted")!.order).toBeLessThan(queryOrder);
    expect(switchCards.find((u) => u.case === "toolCallCompleted")!.order).toBeGreaterThan(queryOrder);
    const switchCard = completedCard(first, "call_switch");
    expect(switchCard?.tool.case === "switchModeToolCall" && switchCard.tool.value.result?.result).toMatchObject({ case: "success", value: { fromModeId: "agent", toModeId: "plan" } });
    const turn1 = gw.llm.requestsTo("openai-chat");
    expect(textOf(afterLastUser(chatMessages(turn1[1])).find((m) => m.tool_call_id === "call_switch")?.content)).toMatch(/approved switching from agent to plan mode/);
    // The run kept its agent tools; the conversation is in plan mode from now on.
    expect(toolNames(turn1[0]!.body)).toContain("Write");
    expect(first.lastSettled?.mode).toBe(agent.AgentMode.PLAN);

    // ---- turn 2 (plan mode, as the IDE now sends): plan prompt and tools; CreatePlan ----
    const plan = "# Response cache\n\n1. Add a cache layer in `src/cache.ts`.\n2. Use it in `src/api.ts`.";
    enqueueChat(gw, {
      id: "chatcmpl-plan-1",
      calls: [
        {
          id: "call_plan",
          name: "CreatePlan",
          args: { name: "Response cache", overview: "Cache API responses.", plan, todos: [{ id: "cache", content: "Add the cache layer" }, { id: "wire", content: "Use it in the API" }] },
        },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-plan-2", text: "The plan is ready for review." });
    const planning = queryAnswers({ createPlan: { planUri: "file:///home/dev/.cursor/plans/response-cache.md" } });
    const second = await finishedOk(chat.send("Go ahead and plan it.", { modelId: gw.modelId, onQuery: planning.handler }));
    expect(second.violations, second.describe()).toEqual([]);
    const turn2 = gw.llm.requestsTo("openai-chat")[2]!.body;
    expect(systemText(turn2)).toContain("Plan mode");
    expect(toolNames(turn2)).toEqual(expect.arrayContaining(["CreatePlan", "SwitchMode", "Read"]));
    expect(toolNames(turn2)).not.toContain("Write");
    const planQuery = planning.received[0]!.query;
    expect(planQuery.case === "createPlanRequestQuery" && planQuery.value).toMatchObject({ toolCallId: "call_plan", args: { name: "Response cache", plan, todos: [{ id: "cache" }, { id: "wire" }] } });
    expect(textOf(afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[3])).find((m) => m.tool_call_id === "call_plan")?.content)).toMatch(
      /shown to the user and saved as file:\/\/\/home\/dev\/\.cursor\/plans\/response-cache\.md\. Its 2 steps are the conversation's todo list now/,
    );
    const planCard = completedCard(second, "call_plan");
    expect(planCard?.tool.case === "createPlanToolCall" && planCard.tool.value.result).toMatchObject({ planUri: "file:///home/dev/.cursor/plans/response-cache.md", result: { case: "success" } });
    // The checkpoint holds the plan and its steps as the todo list; the mode stays plan.
    const settled = second.lastSettled!;
    expect(settled.mode).toBe(agent.AgentMode.PLAN);
    expect(settled.plan).toBeDefined();
    expect(fromBinary(tools.ConversationPlanSchema, chat.client.blobs.get(settled.plan!)!).plan).toBe(plan);
    const todos = settled.todos.map((id) => fromBinary(tools.TodoItemSchema, chat.client.blobs.get(id)!));
    expect(todos.map((t) => [t.id, t.content, t.status])).toEqual([
      ["cache", "Add the cache layer", tools.TodoStatus.PENDING],
      ["wire", "Use it in the API", tools.TodoStatus.PENDING],
    ]);

    // ---- turn 3: a mode that does not exist (tool error) and a declined switch (told, not an error) ----
    enqueueChat(gw, {
      id: "chatcmpl-mode-3",
      calls: [
        { id: "call_bad_mode", name: "SwitchMode", args: { target_mode_id: "turbo" } },
        { id: "call_to_agent", name: "SwitchMode", args: { target_mode_id: "agent" } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-mode-4", text: "Staying in plan mode." });
    const declining = queryAnswers({ switchMode: { reject: "review the plan first" } });
    const third = await finishedOk(chat.send("Build it now.", { modelId: gw.modelId, onQuery: declining.handler }));
    expect(third.text).toBe("Staying in plan mode.");
    expect(declining.received).toHaveLength(1);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[5]));
    expect(textOf(loop.find((m) => m.tool_call_id === "call_bad_mode")?.content)).toBe(
      'Invalid arguments for SwitchMode: mode "turbo" does not exist; use one of agent, plan, ask, debug.',
    );
    expect(textOf(loop.find((m) => m.tool_call_id === "call_to_agent")?.content)).toBe("The user declined switching to agent mode: review the plan first. Stay in plan mode.");
    const bad = completedCard(third, "call_bad_mode");
    expect(bad?.tool.case === "switchModeToolCall" && bad.tool.value.result?.result.case).toBe("error");
    expect(third.lastSettled?.mode).toBe(agent.AgentMode.PLAN);

    // ---- turn 4: the member presses "Build": the plan runs in agent mode, with agent tools ----
    enqueueChat(gw, { id: "chatcmpl-build-1", text: "Starting with the cache layer." });
    const build = await finishedOk(chat.executePlan(plan, { modelId: gw.modelId, planFileUri: "file:///home/dev/.cursor/plans/response-cache.md" }));
    expect(build.violations, build.describe()).toEqual([]);
    const buildRequest = gw.llm.requestsTo("openai-chat")[6]!.body;
    expect(systemText(buildRequest)).not.toContain("Plan mode");
    expect(toolNames(buildRequest)).toContain("Write");
    const kickoff = chatMessages(gw.llm.requestsTo("openai-chat")[6]).at(-1);
    expect(textOf(kickoff?.content)).toContain("Carry out this plan (file:///home/dev/.cursor/plans/response-cache.md)");
    expect(textOf(kickoff?.content)).toContain("1. Add a cache layer in `src/cache.ts`.");
    expect(build.lastSettled?.mode).toBe(agent.AgentMode.AGENT);
  });
});
