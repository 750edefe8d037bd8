/**
 * `POST /agent.v1.AgentService/RunSSE` (server stream): the downstream half of
 * a run. Starts with a heartbeat, relays the run's frames, sends a heartbeat
 * whenever nothing was written for `heartbeatMs`, and finishes with exactly one
 * EndStream (written from the frames' return / thrown ConnectError).
 * A client that goes away before the EndStream is reported to the session.
 *
 * `runSseFrames` is that stream, whoever writes it: connect-node (the route
 * below) or the direct writer for Cursor's request shape (run-sse-direct.ts).
 */
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import type { CursorAdapterMetrics } from "../metrics.ts";
import type { DetachReason } from "../transport/run-registry.ts";
import type { RunRouter } from "../transport/run-router.ts";
import { connectError } from "./connect-errors.ts";
import { memberIdOf, type RequestHeaders } from "./request-identity.ts";

export interface RunSseDeps {
  router: RunRouter;
  heartbeatMs: number;
  metrics: CursorAdapterMetrics;
  log: Logger;
}

/** `interaction_update { heartbeat {} }`. */
export const HEARTBEAT_FRAME: agent.AgentServerMessage = create(agent.AgentServerMessageSchema, {
  message: { case: "interactionUpdate", value: { message: { case: "heartbeat", value: {} } } },
});

export interface RunSseRequest {
  requestId: string;
  requestHeaders: RequestHeaders;
  /** Fires when the client goes away. */
  signal: AbortSignal;
  /** Called once the request id is attached, before the first frame (response headers can still be set). */
  onAttached(): void;
}

/** The frames of one RunSSE; returns for an ok end, throws a ConnectError for an error end. */
export async function* runSseFrames(deps: RunSseDeps, request: RunSseRequest): AsyncGenerator<agent.AgentServerMessage> {
  const requestId = request.requestId;
  if (requestId === "") throw connectError("invalid_argument", "request_id is missing");
  const attached = await deps.router.attach(requestId, memberIdOf(request.requestHeaders));
  if (attached.kind === "rejected") {
    deps.log.info({ request_id: requestId, code: attached.code, reason: attached.message }, "RunSSE rejected");
    throw connectError(attached.code, attached.message);
  }
  request.onAttached();
  let reason: DetachReason = "disconnected";
  try {
    yield HEARTBEAT_FRAME;
    for (;;) {
      const read = await attached.stream.next(deps.heartbeatMs, request.signal);
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
}

/** The connect-node route: every request shape the direct writer leaves alone. */
export function createRunSseHandler(deps: RunSseDeps) {
  return function runSse(request: agent.BidiRequestId, ctx: HandlerContext): AsyncGenerator<agent.AgentServerMessage> {
    return runSseFrames(deps, {
      requestId: request.requestId,
      requestHeaders: ctx.requestHeader,
      signal: ctx.signal,
      onAttached: () => ctx.responseHeader.set("cache-control", "no-cache"),
    });
  };
}
