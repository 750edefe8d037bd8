/**
 * The two halves of a Cursor agent run on the HTTP/1.1 transport, routed as a
 * whole: BidiAppend bodies are read (they are small unary calls), inspected and
 * re-sent byte for byte to the run's route; RunSSE waits (bounded) until the
 * run's first append has decided the route and is then streamed to it.
 *
 * Every request id and conversation id is bound to the member that first used
 * it; another member gets 403.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ENVELOPE_COMPRESSED, ENVELOPE_END_STREAM, decodeContent, headerValue, parseEnvelopes, readBody } from "./http-body.ts";
import { MAX_ROUTED_BODY_BYTES, type InterceptDeps, type TunnelInfo } from "./proxy-context.ts";
import { inspectBidiAppend, routeForModel, runSseRequestId, type RunRoute } from "./routing.ts";
import { MEMBER_HEADER, forwardStreaming, sendProxyError } from "./upstream.ts";

function sendTo(route: RunRoute, req: IncomingMessage, res: ServerResponse, body: Buffer, tunnel: TunnelInfo, deps: InterceptDeps): void {
  const common = { body, connectTimeoutMs: deps.connectTimeoutMs, log: deps.log };
  switch (route) {
    case "local":
      deps.metrics.request("byok");
      forwardStreaming(req, res, deps.adapter, { ...common, set: { [MEMBER_HEADER]: tunnel.memberId } });
      return;
    case "upstream":
      deps.metrics.request("passthrough");
      forwardStreaming(req, res, deps.upstreamFor(tunnel), common);
      return;
    default: {
      const never: never = route;
      throw new Error(`unknown route ${String(never)}`);
    }
  }
}

function forbidden(res: ServerResponse, what: string): void {
  sendProxyError(res, 403, "permission_denied", `${what} belongs to another member`);
}

async function readRouted(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
  const read = await readBody(req, MAX_ROUTED_BODY_BYTES);
  if (read.kind === "ok") return read.bytes;
  if (read.kind === "too_large") sendProxyError(res, 413, "resource_exhausted", `request body larger than ${read.limit} bytes`);
  else res.destroy();
  return undefined;
}

/** Waits for the route of `requestId` and forwards; 504 when nothing decides it in time. */
async function forwardWhenDecided(requestId: string, req: IncomingMessage, res: ServerResponse, body: Buffer, tunnel: TunnelInfo, deps: InterceptDeps): Promise<void> {
  const abort = new AbortController();
  const onClose = (): void => abort.abort();
  res.once("close", onClose);
  const wait = await deps.routes.waitForRoute(requestId, deps.routeWaitMs, abort.signal);
  res.off("close", onClose);
  switch (wait.kind) {
    case "decided":
      sendTo(wait.route, req, res, body, tunnel, deps);
      return;
    case "timeout":
      deps.log.warn({ request_id: requestId, path: req.url }, "run route not decided in time");
      sendProxyError(res, 504, "deadline_exceeded", `no run_request for request id ${requestId} within ${deps.routeWaitMs} ms`);
      return;
    case "aborted":
      return;
    default: {
      const never: never = wait;
      throw new Error(`unknown wait ${JSON.stringify(never)}`);
    }
  }
}

export async function handleBidiAppend(req: IncomingMessage, res: ServerResponse, tunnel: TunnelInfo, deps: InterceptDeps): Promise<void> {
  const body = await readRouted(req, res);
  if (!body) return;
  const decoded = decodeContent(body, headerValue(req.headers, "content-encoding"));
  const inspection = decoded.kind === "ok" ? inspectBidiAppend(decoded.bytes, headerValue(req.headers, "content-type")) : ({ kind: "unreadable" } as const);
  switch (inspection.kind) {
    case "unreadable":
      // Not ours to judge: Cursor answers it.
      sendTo("upstream", req, res, body, tunnel, deps);
      return;
    case "foreign": {
      // Non-agent payloads (speech-to-text) follow a known local run, else go upstream.
      // A foreign first append (seqno 0) settles the id as upstream.
      const claim =
        inspection.seqno === 0n
          ? deps.routes.decide(inspection.requestId, tunnel.memberId, "upstream")
          : deps.routes.claimRun(inspection.requestId, tunnel.memberId);
      if (claim.kind === "forbidden") return forbidden(res, "request id");
      sendTo(claim.route ?? "upstream", req, res, body, tunnel, deps);
      return;
    }
    case "run_start": {
      const log = deps.log.child({ request_id: inspection.requestId, member_id: tunnel.memberId });
      const parent = headerValue(req.headers, "x-parent-request-id");
      const parentMember = parent ? deps.routes.runMember(parent) : undefined;
      if (parentMember !== undefined && parentMember !== tunnel.memberId) return forbidden(res, "parent request id");
      if (inspection.conversationId !== undefined && !deps.routes.claimConversation(inspection.conversationId, tunnel.memberId)) {
        log.warn({ conversation_id: inspection.conversationId }, "member tried to use another member's conversation");
        return forbidden(res, "conversation");
      }
      const route = routeForModel(inspection.modelId, deps.byokModelIds);
      const decided = deps.routes.decide(inspection.requestId, tunnel.memberId, route);
      if (decided.kind === "forbidden") return forbidden(res, "request id");
      log.info({ conversation_id: inspection.conversationId, model_id: inspection.modelId, route: decided.route }, "run routed");
      sendTo(decided.route ?? route, req, res, body, tunnel, deps);
      return;
    }
    case "agent_message": {
      const claim = deps.routes.claimRun(inspection.requestId, tunnel.memberId);
      if (claim.kind === "forbidden") return forbidden(res, "request id");
      if (claim.route !== undefined) sendTo(claim.route, req, res, body, tunnel, deps);
      else await forwardWhenDecided(inspection.requestId, req, res, body, tunnel, deps);
      return;
    }
    default: {
      const never: never = inspection;
      throw new Error(`unknown inspection ${JSON.stringify(never)}`);
    }
  }
}

/** The BidiRequestId bytes of a RunSSE body: one Connect envelope (maybe compressed) or the bare message. */
function runSseMessage(body: Buffer, req: IncomingMessage): Buffer | undefined {
  const streamed = (headerValue(req.headers, "content-type") ?? "").toLowerCase().startsWith("application/connect+");
  const decoded = decodeContent(body, streamed ? undefined : headerValue(req.headers, "content-encoding"));
  if (decoded.kind !== "ok") return undefined;
  if (!streamed) return decoded.bytes;
  const first = parseEnvelopes(decoded.bytes)?.[0];
  if (!first || (first.flags & ENVELOPE_END_STREAM) !== 0) return undefined;
  if ((first.flags & ENVELOPE_COMPRESSED) === 0) return first.payload;
  const inner = decodeContent(first.payload, headerValue(req.headers, "connect-content-encoding"));
  return inner.kind === "ok" ? inner.bytes : undefined;
}

export async function handleRunSse(req: IncomingMessage, res: ServerResponse, tunnel: TunnelInfo, deps: InterceptDeps): Promise<void> {
  const body = await readRouted(req, res);
  if (!body) return;
  const message = runSseMessage(body, req);
  const requestId = message ? runSseRequestId(message) : undefined;
  if (requestId === undefined) {
    sendTo("upstream", req, res, body, tunnel, deps);
    return;
  }
  const claim = deps.routes.claimRun(requestId, tunnel.memberId);
  if (claim.kind === "forbidden") {
    deps.log.warn({ request_id: requestId, member_id: tunnel.memberId }, "member tried to attach to another member's run");
    return forbidden(res, "request id");
  }
  if (claim.route !== undefined) sendTo(claim.route, req, res, body, tunnel, deps);
  else await forwardWhenDecided(requestId, req, res, body, tunnel, deps);
}
