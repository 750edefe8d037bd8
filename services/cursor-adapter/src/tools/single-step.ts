/** An exec of exactly one request (Read, Delete, Grep, Glob, MCP, ...). */
import type { ExecCall, ExecProgress, ExecReply, ExecStep, ToolEffect, ToolOutcome } from "./types.ts";

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

