/**
 * `POST /aiserver.v1.BidiService/BidiAppend` (unary): one upstream
 * AgentClientMessage of a run. Answered as soon as the append is accepted into
 * the run's ordered input, never after the model; later failures of the run go
 * out on its RunSSE stream.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { aiserver } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import type { RunRouter } from "../transport/run-router.ts";
import { decodeBidiAppend } from "./append-decoding.ts";
import { connectError } from "./connect-errors.ts";
import { memberIdOf, sessionHeaders, type RequestHeaders } from "./request-identity.ts";

export interface BidiAppendDeps {
  router: RunRouter;
  log: Logger;
}

/** The append itself, for connect-node's route and the direct path (bidi-append-direct.ts). */
export type AppendHandler = (request: aiserver.BidiAppendRequest, headers: RequestHeaders) => Promise<MessageInitShape<typeof aiserver.BidiAppendResponseSchema>>;

export function createBidiAppendHandler(deps: BidiAppendDeps) {
  const append = createAppendHandler(deps);
  return function bidiAppend(request: aiserver.BidiAppendRequest, ctx: HandlerContext): Promise<MessageInitShape<typeof aiserver.BidiAppendResponseSchema>> {
    return append(request, ctx.requestHeader);
  };
}

export function createAppendHandler(deps: BidiAppendDeps): AppendHandler {
  return async function bidiAppend(request, requestHeaders) {
    const decoded = decodeBidiAppend(request);
    if (decoded.kind === "invalid") {
      deps.log.info({ request_id: request.requestId?.requestId, reason: decoded.message }, "invalid BidiAppend");
      throw connectError("invalid_argument", decoded.message);
    }
    const outcome = await deps.router.append({
      requestId: decoded.requestId,
      memberId: memberIdOf(requestHeaders),
      seqno: decoded.seqno,
      message: decoded.message,
      bytes: decoded.bytes,
      headers: decoded.seqno === 0 ? sessionHeaders(requestHeaders) : {},
    });
    switch (outcome.kind) {
      case "accepted":
      case "duplicate":
      case "ignored":
        return {};
      case "rejected":
        deps.log.info(
          { request_id: decoded.requestId, append_seqno: decoded.seqno, code: outcome.code, reason: outcome.message },
          "BidiAppend rejected",
        );
        throw connectError(outcome.code, outcome.message);
      default: {
        const unexpected: never = outcome;
        throw new Error(`unexpected append outcome ${JSON.stringify(unexpected)}`);
      }
    }
  };
}
