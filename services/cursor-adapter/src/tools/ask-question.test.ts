import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { invalidOf, testContext, variantOf, viaWire } from "./tool-test-support.ts";
import type { InteractionReply, ToolPlan } from "./types.ts";

const ARGS = {
  title: "Setup",
  questions: [
    { id: "db", prompt: "Which database?", options: [{ id: "pg", label: "Postgres" }, { id: "my", label: "MySQL" }] },
    { id: "extras", prompt: "Extras?", allow_multiple: true, options: [{ id: "c", label: "Cache" }, { id: "q", label: "Queue" }] },
  ],
};

function ask(args: object): ToolPlan {
  return planToolCall({ callId: "call_q", name: "AskQuestion", argumentsJson: JSON.stringify(args) }, testContext());
}

function interaction(plan: ToolPlan) {
  if (plan.kind !== "interaction") throw new Error(plan.kind);
  return plan;
}

function response(result: tools.AskQuestionResult["result"]): InteractionReply {
  const value = create(tools.AskQuestionInteractionResponseSchema, { result: { result } });
  return { case: "askQuestionInteractionResponse", value: viaWire(tools.AskQuestionInteractionResponseSchema, value) };
}

describe("AskQuestion", () => {
  it("asks through an interaction query carrying the questions and the call id", () => {
    const plan = interaction(ask(ARGS));
    expect(plan.query.case).toBe("askQuestionInteractionQuery");
    expect(plan.query.value).toMatchObject({
      toolCallId: "call_q",
      args: { title: "Setup", questions: [{ id: "db", options: [{ id: "pg", label: "Postgres" }, { id: "my" }] }, { id: "extras", allowMultiple: true }] },
    });
    expect(variantOf(plan.started, "askQuestionToolCall").args?.questions).toHaveLength(2);
  });

  it("returns the answers as JSON with the chosen option labels", () => {
    const plan = interaction(ask(ARGS));
    const done = plan.onResponse(
      response({
        case: "success",
        value: create(tools.AskQuestionSuccessSchema, {
          answers: [
            { questionId: "db", selectedOptionIds: ["pg"] },
            { questionId: "extras", selectedOptionIds: ["c", "q"], freeformText: "and metrics" },
          ],
        }),
      }),
    );
    if (done.kind !== "done") throw new Error(done.kind);
    expect(done.outcome.isError).toBe(false);
    expect(JSON.parse(done.outcome.content)).toEqual({
      answers: [
        { question_id: "db", question: "Which database?", selected: ["Postgres"] },
        { question_id: "extras", question: "Extras?", selected: ["Cache", "Queue"], freeform_text: "and metrics" },
      ],
    });
    expect(variantOf(done.outcome.toolCall, "askQuestionToolCall").result?.result.case).toBe("success");
  });

  it("passes a refusal on as a normal result and an empty response as a protocol error", () => {
    const plan = interaction(ask(ARGS));
    const declined = plan.onResponse(response({ case: "rejected", value: create(tools.AskQuestionRejectedSchema, { reason: "later" }) }));
    expect(declined).toMatchObject({ kind: "done", outcome: { content: "The user declined to answer: later", isError: false } });
    expect(plan.onResponse({ case: undefined }).kind).toBe("protocol_error");
  });

  it("needs at least two options per question", () => {
    const plan = invalidOf(ask({ questions: [{ id: "a", prompt: "?", options: [{ id: "x", label: "X" }] }] }));
    expect(plan.error).toMatch(/questions\[0\]\.options must list at least two options/);
    expect(variantOf(plan.outcome.toolCall, "askQuestionToolCall").result?.result.case).toBe("error");
  });
});
