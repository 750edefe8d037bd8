/**
 * `POST /agent.v1.AgentService/RunSSE` (server stream): the downstream half of
 * a run. Starts with a heartbeat, relays the run's frames, sends a heartbeat
 * whenever nothing was written for `heartbeatMs`, and finishes with exactly one
 * EndStream (connect-node writes it from our return / thrown ConnectError).
 * A client that goes away before the EndStream is reported to the session.
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import type { CursorAdapterMetrics } from "../metrics.ts";
import type { DetachReason, RunRegistry } from "../transport/run-registry.ts";
import { connectError } from "./connect-errors.ts";
import { memberIdOf } from "./request-identity.ts";

export interface RunSseDeps {
  registry: RunRegistry;
  heartbeatMs: number;
  metrics: CursorAdapterMetrics;
  log: Logger;
}

/** `interaction_update { heartbeat {} }`. */
export const HEARTBEAT_FRAME: agent.AgentServerMessage = create(agent.AgentServerMessageSchema, {
  message: { case: "interactionUpdate", value: { message: { case: "heartbeat", value: {} } } },
});

export function createRunSseHandler(deps: RunSseDeps) {
  return async function* runSse(request: agent.BidiRequestId, ctx: HandlerContext): AsyncGenerator<agent.AgentServerMessage> {
    const requestId = request.requestId;
    if (requestId === "") throw connectError("invalid_argument", "request_id is missing");
    const attached = deps.registry.attach(requestId, memberIdOf(ctx.requestHeader));
    if (attached.kind === "rejected") {
      deps.log.info({ request_id: requestId, code: attached.code, reason: attached.message }, "RunSSE rejected");
      throw connectError(attached.code, attached.message);
    }
    ctx.responseHeader.set("cache-control", "no-cache");
    let reason: DetachReason = "disconnected";
    try {
      yield HEARTBEAT_FRAME;
      for (;;) {
        const read = await attached.stream.next(deps.heartbeatMs, ctx.signal);
        switch (read.kind) {
          case "message":
            yield read.message;
            break;
          case "idle":
            yield HEARTBEAT_FRAME;
            break;
          case "aborted":
            return;
          case "end": {
            reason = "finished";
            const outcome = read.outcome;
            if (outcome.kind === "ok") return;
            throw connectError(outcome.code, outcome.message, outcome.details);
          }
          default: {
            const unexpected: never = read;
            throw new Error(`unexpected stream item ${JSON.stringify(unexpected)}`);
          }
        }
      }
    } finally {
      attached.detach(reason);
      deps.metrics.runSseEnded(reason);
    }
  };
}
