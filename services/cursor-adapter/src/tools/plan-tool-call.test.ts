import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { invalidOf, testContext, variantOf } from "./tool-test-support.ts";

describe("planToolCall", () => {
  it("answers a tool the run does not offer with an error result, not a crash", () => {
    const ctx = testContext({ allowedToolNames: new Set(["Read", "Grep"]) });
    const unknown = invalidOf(planToolCall({ callId: "c1", name: "WebSearch", argumentsJson: "{}" }, ctx));
    expect(unknown.error).toBe("Tool WebSearch is not available. Available tools: Read, Grep.");
    expect(unknown.outcome).toMatchObject({ content: unknown.error, isError: true });
    expect(unknown.outcome.toolCall.tool.case).toBeUndefined();

    const notInMode = invalidOf(planToolCall({ callId: "c2", name: "Shell", argumentsJson: '{"command":"ls"}' }, ctx));
    expect(notInMode.error).toMatch(/^Tool Shell is not available/);
  });

  it("turns arguments that are not a JSON object into a typed error card", () => {
    const plan = invalidOf(planToolCall({ callId: "c3", name: "Read", argumentsJson: '{"path": "/a' }, testContext()));
    expect(plan.error).toMatch(/^Invalid arguments for Read: not valid JSON/);
    expect(plan.started.toolCallId).toBe("c3");
    const card = variantOf(plan.outcome.toolCall, "readToolCall");
    expect(card.result?.result).toMatchObject({ case: "error", value: { errorMessage: plan.error } });
  });

  it("stamps the started card with the call id and start time, and the completed card with both times", () => {
    const clock = { now: 5_000 };
    const ctx = testContext({ clock });
    const plan = planToolCall({ callId: "call_x\nfc_y", name: "Delete", argumentsJson: "{}" }, ctx);
    expect(plan.started.toolCallId).toBe("call_x\nfc_y");
    expect(plan.started.startedAtMs).toBe(5_000n);
    expect(plan.started.completedAtMs).toBeUndefined();
    const outcome = invalidOf(plan).outcome;
    expect(outcome.toolCall.startedAtMs).toBe(5_000n);
    expect(outcome.toolCall.completedAtMs).toBe(5_000n);
  });

  it("routes dynamic MCP tools by name", () => {
    const ctx = testContext({ mcpDefinitions: [{ name: "srv-ping", description: "", providerIdentifier: "srv", toolName: "ping" }] });
    const plan = planToolCall({ callId: "c4", name: "srv-ping", argumentsJson: "" }, ctx);
    expect(plan.kind).toBe("exec");
    expect(plan.started.tool.case).toBe("mcpToolCall");
  });
});
