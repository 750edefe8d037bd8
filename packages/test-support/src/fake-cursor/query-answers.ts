/**
 * The IDE's answers to interaction queries, for tests: approve or reject web
 * fetches and searches and mode switches, accept a plan (with the plan file
 * the IDE would write), and record every query that arrived.
 *
 *   const answers = queryAnswers({ webFetch: { reject: "not this site" } });
 *   chat.send("...", { modelId, onQuery: answers.handler });
 *   answers.received  // the queries, in arrival order
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { agent } from "@byok/cursor-protocol";
import type { QueryContext, QueryHandler } from "./exec.ts";

/** "approve", or a rejection with its reason. */
export type Approval = "approve" | { reject: string };

export interface QueryAnswerOptions {
  webFetch?: Approval | ((url: string) => Approval);
  webSearch?: Approval;
  switchMode?: Approval;
  /** Accept plans (the answer carries this plan file URI), or report an error. */
  createPlan?: { planUri: string } | { error: string };
}

export interface QueryAnswers {
  readonly handler: QueryHandler;
  readonly received: agent.InteractionQuery[];
}

type ResponseInit = MessageInitShape<typeof agent.InteractionResponseSchema>["result"];

function approval(answer: Approval): { case: "approved"; value: object } | { case: "rejected"; value: { reason: string } } {
  return answer === "approve" ? { case: "approved", value: {} } : { case: "rejected", value: { reason: answer.reject } };
}

export function queryAnswers(options: QueryAnswerOptions = {}): QueryAnswers {
  const received: agent.InteractionQuery[] = [];
  const handler: QueryHandler = async (ctx: QueryContext) => {
    received.push(ctx.query);
    const q = ctx.query.query;
    let result: ResponseInit;
    switch (q.case) {
      case "webFetchRequestQuery": {
        const answer = typeof options.webFetch === "function" ? options.webFetch(q.value.args?.url ?? "") : (options.webFetch ?? "approve");
        result = { case: "webFetchRequestResponse", value: { result: approval(answer) } };
        break;
      }
      case "webSearchRequestQuery":
        result = { case: "webSearchRequestResponse", value: { result: approval(options.webSearch ?? "approve") } };
        break;
      case "switchModeRequestQuery":
        result = { case: "switchModeRequestResponse", value: { result: approval(options.switchMode ?? "approve") } };
        break;
      case "createPlanRequestQuery": {
        const plan = options.createPlan ?? { planUri: "file:///home/dev/.cursor/plans/plan.md" };
        result = {
          case: "createPlanRequestResponse",
          value: { result: "error" in plan ? { result: { case: "error", value: { error: plan.error } } } : { planUri: plan.planUri, result: { case: "success", value: {} } } },
        };
        break;
      }
      case "askQuestionInteractionQuery":
        result = { case: "askQuestionInteractionResponse", value: { result: { result: { case: "rejected", value: { reason: "the test does not answer questions" } } } } };
        break;
      case undefined:
        result = { case: undefined };
        break;
      default: {
        const never: never = q;
        throw new Error(`unknown interaction query ${JSON.stringify(never)}`);
      }
    }
    await ctx.respond({ result });
  };
  return { handler, received };
}

/** Approves every fetch, search and mode switch, and accepts every plan. */
export function approveAll(): QueryAnswers {
  return queryAnswers();
}
