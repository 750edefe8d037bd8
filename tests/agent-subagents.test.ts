/**
 * End to end: sub-agents (Task). The fake IDE starts each child as its own
 * run with the parent headers, like Cursor does; the gateway serves both.
 *
 * - Foreground (through the edge proxy, as a member): parent Task -> child run
 *   with the parent headers -> a child tool round -> the child's final message
 *   as the parent's Task result -> the parent's final answer; the store links
 *   the child to the parent run and tool call, and usage counts both runs for
 *   the member, the child as a sub-agent run.
 * - Background: the parent turn ends at once; the child (on the model the
 *   parent model's policy names) finishes later and its completion comes back
 *   as a new parent run; sending that completion again appends nothing.
 * - Policy "disabled": Task is not offered.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RunStatus, type Message } from "@byok/contracts";
import type { tools } from "@byok/cursor-protocol";
import { SubagentRunner, type ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import { storedHistory } from "@byok/test-support/stored-messages";
import { CLAUDE_MODEL_ID, enqueueAnthropicText, withClaudeModel } from "./agent-support.ts";
import { afterLastUser, chatMessages, systemText, textOf, toolNames } from "@byok/test-support/chat-requests";
import { completedCard, enqueueChat, execArgs, finishedOk, readSuccess } from "./tools-support.ts";

describe("sub-agents end to end", () => {
  let gw: GatewayHarness | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("foreground: the child runs with the parent headers and its own tool round, its final message is the Task result; store links and usage per member", async () => {
    const harness = await startGateway({ edgeProxy: true });
    gw = harness;
    const edge = harness.edge!;
    const alice = await edge.createMember("alice");
    const client = edge.client({ name: "alice", key: alice.key });

    const prompt = "Find where the config file is parsed and report the file and function.";
    enqueueChat(harness, { id: "chatcmpl-parent-1", calls: [{ id: "call_task", name: "Task", args: { description: "Find the config parser", prompt, subagent_type: "explore" } }] });
    enqueueChat(harness, {
      id: "chatcmpl-child-1",
      calls: [
        { id: "call_step", name: "UpdateCurrentStep", args: { current_step: "Reading src/config.ts" } },
        { id: "call_read", name: "Read", args: { path: "/home/dev/project/src/config.ts" } },
      ],
    });
    enqueueChat(harness, { id: "chatcmpl-child-2", text: "The config is parsed by parseConfig in src/config.ts." });
    enqueueChat(harness, { id: "chatcmpl-parent-2", text: "parseConfig in src/config.ts parses the config." });

    const childReads: string[] = [];
    const subagents = new SubagentRunner(client, {
      onExec: {
        readArgs: async (ctx: ExecContext) => {
          const { path } = execArgs<tools.ReadArgs>(ctx);
          childReads.push(path);
          await ctx.reply(readSuccess(path, "export function parseConfig() {}\n"));
        },
      },
    });
    const chat = client.conversation();
    const parent = await finishedOk(chat.send("Where is the config parsed?", { modelId: harness.modelId, onExec: { subagentArgs: subagents.handler(chat) } }));
    expect(parent.violations, parent.describe()).toEqual([]);
    expect(parent.text).toBe("parseConfig in src/config.ts parses the config.");

    // The parent asked the IDE for a sub-agent on the model its policy names (inherit: the same model).
    expect(subagents.children).toHaveLength(1);
    const child = subagents.children[0]!;
    expect(child.args).toMatchObject({ toolCallId: "call_task", subagentType: "explore", modelId: harness.modelId, prompt, parentConversationId: chat.id, readonly: true });
    expect(child.background).toBe(false);
    const childResult = child.result!;
    expect(childResult.end.kind, childResult.describe()).toBe("ok");
    expect(childResult.violations, childResult.describe()).toEqual([]);
    expect(childReads).toEqual(["/home/dev/project/src/config.ts"]);

    // The child ran as a sub-agent: its prompt and manifest (UpdateCurrentStep, no Task), the parent's prompt as its task.
    const requests = harness.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(4);
    const childFirst = requests[1]!.body;
    expect(systemText(childFirst)).toContain("sub-agent");
    expect(toolNames(childFirst)).toContain("UpdateCurrentStep");
    expect(toolNames(childFirst)).not.toContain("Task");
    expect(toolNames(requests[0]!.body)).toContain("Task");
    expect(textOf(chatMessages(requests[1]).at(-1)?.content)).toContain(prompt);
    const childLoop = afterLastUser(chatMessages(requests[2]));
    expect(childLoop.filter((m) => m.role === "tool").map((m) => m.tool_call_id).sort()).toEqual(["call_read", "call_step"]);
    expect(textOf(childLoop.find((m) => m.tool_call_id === "call_step")?.content)).toBe("Progress shown to the parent agent (update 1).");

    // The child's final message is the parent's Task result; the card completed with the agent id.
    const parentLoop = afterLastUser(chatMessages(requests[3]));
    const taskResult = textOf(parentLoop.find((m) => m.tool_call_id === "call_task")?.content);
    expect(taskResult).toMatch(/^The config is parsed by parseConfig in src\/config\.ts\.\n\n\(Sub-agent \S+ finished after 2 tool calls;/);
    const card = completedCard(parent, "call_task");
    expect(card?.tool.case).toBe("taskToolCall");
    if (card?.tool.case !== "taskToolCall") throw new Error("no task card");
    expect(card.tool.value.result?.result).toMatchObject({ case: "success", value: { agentId: child.agentId, isBackground: false } });

    // The store links the child to the parent run and its Task call; both runs are the member's.
    const children = await harness.store("listChildRuns", { parentRunId: parent.requestId });
    expect(children.runs.map((r) => [r.runId, r.parentToolCallId, r.memberId, r.status])).toEqual([[childResult.requestId, "call_task", alice.memberId, RunStatus.COMPLETED]]);
    const parentRun = { run: await harness.endedRun(parent.requestId) };
    expect(parentRun.run).toMatchObject({ memberId: alice.memberId, parentRunId: "" });
    const usage = await harness.store("memberUsage", { memberId: alice.memberId });
    expect(usage.members.map((m) => ({ runs: m.runs, subagents: m.subagentRuns, completed: m.completed, inputRuns: m.inputTokensRuns }))).toEqual([
      { runs: 2, subagents: 1, completed: 2, inputRuns: 2 },
    ]);
  });

  it("background: the parent turn ends, the completion arrives as a new parent run on the policy's child model, and a repeated completion is not appended", async () => {
    const harness = await startGateway({ model: { subagentModel: CLAUDE_MODEL_ID }, configure: withClaudeModel });
    gw = harness;
    enqueueChat(harness, { id: "chatcmpl-bg-1", calls: [{ id: "call_bg", name: "Task", args: { description: "Count the files", prompt: "Count the source files.", run_in_background: true } }] });
    enqueueChat(harness, { id: "chatcmpl-bg-2", text: "A sub-agent is counting the files in the background." });
    enqueueAnthropicText(harness, "msg_child_1", "There are 42 source files.");
    enqueueChat(harness, { id: "chatcmpl-bg-3", text: "The sub-agent counted 42 source files." });

    const client = harness.client();
    const subagents = new SubagentRunner(client);
    const chat = client.conversation();
    const parent = await finishedOk(chat.send("How many source files are there?", { modelId: harness.modelId, onExec: { subagentArgs: subagents.handler(chat) } }));
    expect(parent.text).toBe("A sub-agent is counting the files in the background.");
    const card = completedCard(parent, "call_bg");
    if (card?.tool.case !== "taskToolCall") throw new Error("no task card");
    expect(card.tool.value.result?.result).toMatchObject({ case: "success", value: { isBackground: true } });
    const parentLoop = afterLastUser(chatMessages(harness.llm.requestsTo("openai-chat")[1]));
    expect(textOf(parentLoop.find((m) => m.tool_call_id === "call_bg")?.content)).toMatch(/is working on "Count the files" in the background/);

    // The child ran on the model the parent model's policy names, linked to the parent.
    await waitFor(() => subagents.completions.length === 1, "the completion run");
    const child = subagents.children[0]!;
    expect(child.args.modelId).toBe(CLAUDE_MODEL_ID);
    expect(child.result?.end.kind, child.result?.describe()).toBe("ok");
    expect(harness.llm.requestsTo("anthropic")).toHaveLength(1);
    const childRuns = await harness.store("listChildRuns", { parentRunId: parent.requestId });
    expect(childRuns.runs.map((r) => [r.modelId, r.parentToolCallId])).toEqual([[CLAUDE_MODEL_ID, "call_bg"]]);

    // The completion: a new run of the parent conversation; the model reads the child's report.
    const completion = await finishedOk(subagents.completions[0]!.run);
    expect(completion.requestId).not.toBe(parent.requestId);
    expect(completion.text).toBe("The sub-agent counted 42 source files.");
    const chatRequests = harness.llm.requestsTo("openai-chat");
    expect(chatRequests).toHaveLength(3);
    const notice = chatMessages(chatRequests[2]).filter((m) => m.role === "user" && textOf(m.content).includes("<background_task_completion>"));
    expect(notice).toHaveLength(1);
    expect(textOf(notice[0]!.content)).toContain(`The background sub-agent ${child.agentId}`);
    expect(textOf(notice[0]!.content)).toContain("There are 42 source files.");

    // The IDE sends the same completion again: the run completes, nothing is appended, no model call.
    const repeated = await subagents.resendCompletion(child.agentId).finished;
    expect(repeated.end.kind, repeated.describe()).toBe("ok");
    expect(repeated.turnEnded).toBeUndefined();
    expect(harness.llm.requestsTo("openai-chat")).toHaveLength(3);
    const repeatedRun = { run: await harness.endedRun(repeated.requestId) };
    expect(repeatedRun.run?.status).toBe(RunStatus.COMPLETED);
    const history = await storedHistory(harness, chat.id);
    const notices = history.filter((m: Message) => m.body.case === "user" && m.body.value.clientId === `runtime:background-subagent:${child.agentId}`);
    expect(notices).toHaveLength(1);
    expect(history.at(-1)?.body.case).toBe("assistant");
  });

  it("does not offer Task when the model's sub-agent policy is disabled", async () => {
    const harness = await startGateway({ model: { subagentModel: "disabled" } });
    gw = harness;
    enqueueChat(harness, { id: "chatcmpl-off", text: "Done." });
    await finishedOk(harness.client().conversation().send("hi", { modelId: harness.modelId }));
    const names = toolNames(harness.llm.requestsTo("openai-chat")[0]!.body);
    expect(names).toContain("Read");
    expect(names).not.toContain("Task");
  });
});
