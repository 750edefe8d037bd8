/** The request-side parts of the agent tools: which tools a run is offered, the sub-agent link, background completions, custom sub-agents in the context. */
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { completionClientId, completionTurn } from "./background-completion.ts";
import { renderRequestContext } from "./request-context.ts";
import { parentLinkOf } from "./subagent-link.ts";
import { toolsLeftOut } from "./tool-offer.ts";

describe("toolsLeftOut", () => {
  const base = { subagentModelId: "m", webFetchEnabled: true, webSearchEnabled: true, requestContext: undefined, suppressProgressTool: false };

  it("leaves out what the gateway or the client cannot or will not run", () => {
    expect([...toolsLeftOut(base)]).toEqual([]);
    expect([...toolsLeftOut({ ...base, subagentModelId: undefined })]).toEqual(["Task"]);
    expect([...toolsLeftOut({ ...base, webSearchEnabled: false, webFetchEnabled: false })].sort()).toEqual(["WebFetch", "WebSearch"]);
    expect([...toolsLeftOut({ ...base, suppressProgressTool: true })]).toEqual(["UpdateCurrentStep"]);
    const off = create(agent.RequestContextSchema, { webSearchEnabled: false, webFetchEnabled: false });
    expect([...toolsLeftOut({ ...base, requestContext: off })].sort()).toEqual(["WebFetch", "WebSearch"]);
    // A client that does not say keeps the tools.
    expect([...toolsLeftOut({ ...base, requestContext: create(agent.RequestContextSchema, {}) })]).toEqual([]);
  });
});

describe("parentLinkOf", () => {
  it("links a run that names its parent request and tool call; ignores unusable ids", () => {
    expect(parentLinkOf({})).toEqual({ kind: "none" });
    expect(parentLinkOf({ "x-parent-request-id": "6c1d1f4e-0b5a-4a36-9b0e-7f3f0c2d9a11", "x-parent-agent-tool-call-id": "call_task" })).toEqual({
      kind: "child",
      parentRunId: "6c1d1f4e-0b5a-4a36-9b0e-7f3f0c2d9a11",
      parentToolCallId: "call_task",
    });
    expect(parentLinkOf({ "x-parent-request-id": "not a run id!" }).kind).toBe("unusable");
    expect(parentLinkOf({ "x-parent-agent-tool-call-id": "call_task" }).kind).toBe("unusable");
  });
});

describe("completionTurn", () => {
  it("makes one runtime message per completion, with once-only client ids per sub-agent or shell, and a simulated user message", () => {
    const action = create(agent.BackgroundTaskCompletionActionSchema, {
      completions: [
        { taskId: "agent-1", kind: agent.BackgroundTaskKind.SUBAGENT, status: agent.BackgroundTaskStatus.SUCCESS, title: "Count files", detail: "42 files", subagentId: "agent-1", toolCallId: "call_bg" },
        { taskId: "17", kind: agent.BackgroundTaskKind.SHELL, status: agent.BackgroundTaskStatus.ERROR, title: "npm test", outputPath: "/t/17.txt" },
      ],
    });
    const turn = completionTurn(action, agent.AgentMode.AGENT);
    if (turn === undefined) throw new Error("no turn");
    expect(turn.onceClientIds).toEqual(["runtime:background-subagent:agent-1", "runtime:background-shell:17"]);
    const texts = turn.messages.map((m) => (m.body.case === "user" ? m.body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("") : ""));
    expect(texts[0]).toBe("<background_task_completion>\nThe background sub-agent agent-1 (Count files) finished.\n\n42 files\n(Started by tool call call_bg.)\n</background_task_completion>");
    expect(texts[1]).toContain("The background shell 17 (npm test) failed.");
    expect(texts[1]).toContain("Full output: /t/17.txt");
    expect(turn.userMessage).toMatchObject({ isSimulatedMsg: true, simulatedMsgReason: agent.SimulatedMsgReason.BACKGROUND_TASK_COMPLETION, messageId: "runtime:background-subagent:agent-1" });
    expect(completionTurn(create(agent.BackgroundTaskCompletionActionSchema, {}), agent.AgentMode.AGENT)).toBeUndefined();
    expect(completionClientId(create(agent.BackgroundTaskCompletionSchema, { taskId: "t", kind: agent.BackgroundTaskKind.SUBAGENT }))).toBe("runtime:background-shell:t");
  });
});

describe("custom sub-agents in the context", () => {
  it("lists them sorted by name after the environment", () => {
    const context = create(agent.RequestContextSchema, {
      env: { osVersion: "linux" },
      customSubagents: [
        { name: "reviewer", description: "Reviews\n   a diff" },
        { name: "archivist", description: "" },
        { name: " ", description: "nameless" },
      ],
    });
    expect(renderRequestContext(context)).toBe(
      "<user_info>\nOS Version: linux\n</user_info>\n\n<custom_subagents>\nSub-agent types the Task tool can start besides generalPurpose, explore and shell:\n- archivist\n- reviewer: Reviews a diff\n</custom_subagents>",
    );
  });
});
