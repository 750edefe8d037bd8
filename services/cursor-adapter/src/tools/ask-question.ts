/**
 * AskQuestion: an interaction query; the user's answer is the tool result.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, isJsonObject, toModelText, type ToolArgs } from "./tool-args.ts";
import type { InteractionProgress, InteractionReply, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

export function planAskQuestion(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("AskQuestion", args);
  const title = reader.optionalString("title") ?? "";
  const rawQuestions = reader.optionalArray("questions");
  if (rawQuestions === undefined) reader.problem(`"questions" is required`);
  else if (rawQuestions.length === 0) reader.problem(`"questions" must contain at least one question`);
  const questions = (rawQuestions ?? []).map((q, i) => readQuestion(q, i, reader));
  const ids = questions.map((q) => q.id);
  if (new Set(ids).size !== ids.length) reader.problem("question ids must be unique");
  const askArgs = create(tools.AskQuestionArgsSchema, { title, questions });
  const error = reader.error();
  if (error !== undefined) {
    const result = create(tools.AskQuestionResultSchema, { result: { case: "error", value: { errorMessage: error } } });
    return {
      kind: "invalid",
      error,
      started: startedCard(call.callId, askVariant(askArgs), ctx),
      outcome: toolOutcome(call.callId, askVariant(askArgs, result), ctx, error, true),
    };
  }
  return {
    kind: "interaction",
    started: startedCard(call.callId, askVariant(askArgs), ctx),
    query: {
      case: "askQuestionInteractionQuery",
      value: create(tools.AskQuestionInteractionQuerySchema, { args: askArgs, toolCallId: call.callId }),
    },
    onResponse: (reply: InteractionReply): InteractionProgress => {
      if (reply.case !== "askQuestionInteractionResponse") {
        return { kind: "protocol_error", message: `AskQuestion answered with ${reply.case ?? "an empty interaction response"}` };
      }
      const result = reply.value.result ?? create(tools.AskQuestionResultSchema);
      const { content, isError } = answerText(askArgs, result);
      return { kind: "done", outcome: toolOutcome(call.callId, askVariant(askArgs, result), ctx, content, isError) };
    },
  };
}

function readQuestion(raw: unknown, index: number, reader: ArgReader): tools.AskQuestionArgs_Question {
  const at = `questions[${index}]`;
  if (!isJsonObject(raw)) {
    reader.problem(`${at} must be an object`);
    return create(tools.AskQuestionArgs_QuestionSchema);
  }
  const id = typeof raw["id"] === "string" && raw["id"] !== "" ? raw["id"] : undefined;
  const prompt = typeof raw["prompt"] === "string" && raw["prompt"] !== "" ? raw["prompt"] : undefined;
  if (id === undefined) reader.problem(`${at}.id must be a non-empty string`);
  if (prompt === undefined) reader.problem(`${at}.prompt must be a non-empty string`);
  const rawOptions = Array.isArray(raw["options"]) ? raw["options"] : undefined;
  if (rawOptions === undefined || rawOptions.length < 2) reader.problem(`${at}.options must list at least two options`);
  const options = (rawOptions ?? []).map((o, j) => {
    if (!isJsonObject(o) || typeof o["id"] !== "string" || o["id"] === "" || typeof o["label"] !== "string") {
      reader.problem(`${at}.options[${j}] needs a string id and label`);
      return create(tools.AskQuestionArgs_OptionSchema);
    }
    return create(tools.AskQuestionArgs_OptionSchema, { id: o["id"], label: o["label"] });
  });
  const allowMultiple = raw["allow_multiple"] === true;
  return create(tools.AskQuestionArgs_QuestionSchema, { id: id ?? "", prompt: prompt ?? "", options, allowMultiple });
}

function askVariant(args: tools.AskQuestionArgs, result?: tools.AskQuestionResult): ToolVariant {
  return { case: "askQuestionToolCall", value: create(tools.AskQuestionToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

/** The answers as JSON (question, chosen option labels, free text); refusals are not tool errors. */
export function answerText(args: tools.AskQuestionArgs, result: tools.AskQuestionResult): { content: string; isError: boolean } {
  const r = result.result;
  switch (r.case) {
    case "success": {
      const answers = r.value.answers.map((a) => {
        const question = args.questions.find((q) => q.id === a.questionId);
        const labels = a.selectedOptionIds.map((id) => question?.options.find((o) => o.id === id)?.label ?? id);
        return {
          question_id: a.questionId,
          ...(question === undefined ? {} : { question: question.prompt }),
          selected: labels,
          ...(a.freeformText === "" ? {} : { freeform_text: a.freeformText }),
        };
      });
      return { content: toModelText({ answers }), isError: false };
    }
    case "rejected":
      return { content: `The user declined to answer${r.value.reason === "" ? "." : `: ${r.value.reason}`}`, isError: false };
    case "async":
      return { content: "The questions were shown to the user; the answers will arrive later as a new message.", isError: false };
    case "error":
      return { content: `Asking the user failed: ${r.value.errorMessage}`, isError: true };
    case undefined:
      return { content: "The user gave no answer.", isError: true };
    default: {
      const unreachable: never = r;
      throw new Error(`unknown AskQuestion result ${String(unreachable)}`);
    }
  }
}
