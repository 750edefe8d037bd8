/** An exec of exactly one request (Read, Delete, Grep, Glob, MCP, ...), and the plan of a tool that is one. */
import { startedCard, toolOutcome } from "./cards.ts";
import type { ExecCall, ExecProgress, ExecReply, ExecStep, ToolEffect, ToolOutcome, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

/** What a decoded result turns into before the card is assembled. */
export interface OutcomeParts<R> {
  result: R;
  content: string;
  isError: boolean;
  effects: ToolEffect[];
}

type ReplyCase = NonNullable<ExecReply["case"]>;
type ReplyValue<C extends ReplyCase> = Extract<ExecReply, { case: C }>["value"];

interface SingleStepHandlers<R> {
  finish(parts: OutcomeParts<R>): ToolOutcome;
  failed(message: string): ToolOutcome;
}

/** An exec of exactly one request whose reply has case `expected`. */
export function singleStepExec<C extends ReplyCase, R>(
  first: ExecStep,
  expected: C,
  decode: (reply: ReplyValue<C>) => OutcomeParts<R>,
  handlers: SingleStepHandlers<R>,
): ExecCall {
  return {
    first,
    onReply(reply: ExecReply): ExecProgress {
      if (reply.case === undefined) return { kind: "waiting" };
      if (reply.case !== expected) return { kind: "protocol_error", message: `${first.request.case} answered with ${reply.case}` };
      return { kind: "done", outcome: handlers.finish(decode(reply.value as ReplyValue<C>)) };
    },
    onThrow(error: string): ExecProgress {
      return { kind: "done", outcome: handlers.failed(`The tool failed on the client: ${error}`) };
    },
    onClosedWithoutResult(): ExecProgress {
      return { kind: "done", outcome: handlers.failed("The client closed the tool stream before sending a result.") };
    },
  };
}


/**
 * The plan of a tool that is one exec: the started card `variant()`, the one
 * `request`, and its reply decoded into the completed card `variant(result)`
 * with the model's content and the effects; `failed` when the client throws or
 * closes the stream without a result.
 */
export function singleStepPlan<C extends ReplyCase, R>(
  callId: string,
  ctx: ToolPlanContext,
  variant: (result?: R) => ToolVariant,
  request: ExecStep["request"],
  expected: C,
  decode: (reply: ReplyValue<C>) => OutcomeParts<R>,
  failed: (message: string) => ToolOutcome,
): ToolPlan {
  return {
    kind: "exec",
    started: startedCard(callId, variant(), ctx),
    exec: singleStepExec({ request, delayMs: 0 }, expected, decode, {
      finish: (parts) => toolOutcome(callId, variant(parts.result), ctx, parts.content, parts.isError, parts.effects),
      failed,
    }),
  };
}
