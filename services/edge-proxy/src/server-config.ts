/**
 * GetServerConfig: Cursor's own answer with HTTP/2 forced off, so the IDE keeps
 * its agent runs on the HTTP/1.1 RunSSE + BidiAppend transport that goes
 * through this proxy (the HTTP/2 agent client ignores http.proxy).
 *
 * The override appends field 7 (http2_config, varint) = 1
 * (HTTP2_CONFIG_FORCE_ALL_DISABLED) to the upstream bytes: for a scalar field
 * the last occurrence wins, and every other byte stays as Cursor sent it.
 * An upstream failure is passed on as the HTTP error it is.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { aiserver } from "@byok/cursor-protocol";
import { readBody } from "./http-body.ts";
import { MAX_UNARY_ANSWER_BYTES, type InterceptDeps, type TunnelInfo } from "./proxy-context.ts";
import { fetchBuffered, sendProxyError } from "./upstream.ts";
import { relayBuffered, sendPayload, unaryPayload } from "./unary-payload.ts";

/** Tag of field 7 with wire type 0 (varint), then the value 1. */
const FORCE_HTTP2_OFF = Buffer.from([(7 << 3) | 0, aiserver.Http2Config.FORCE_ALL_DISABLED]);

export function withHttp2ForcedOff(serverConfigPayload: Buffer): Buffer {
  return Buffer.concat([serverConfigPayload, FORCE_HTTP2_OFF]);
}

export async function answerServerConfig(req: IncomingMessage, res: ServerResponse, tunnel: TunnelInfo, deps: InterceptDeps): Promise<void> {
  const read = await readBody(req, 1024 * 1024);
  if (read.kind !== "ok") {
    if (read.kind === "too_large") sendProxyError(res, 413, "resource_exhausted", "request body too large");
    else res.destroy();
    return;
  }
  const official = await fetchBuffered(req, deps.upstreamFor(tunnel), {
    body: read.bytes,
    set: { "accept-encoding": "identity", "connect-accept-encoding": "identity" },
    timeoutMs: deps.upstreamUnaryTimeoutMs,
    connectTimeoutMs: deps.connectTimeoutMs,
    maxBytes: MAX_UNARY_ANSWER_BYTES,
  });
  if (official.kind === "failed") {
    sendProxyError(res, 502, "unavailable", `upstream failed: ${official.message}`);
    return;
  }
  const payload = unaryPayload(official, aiserver.GetServerConfigResponseSchema);
  if (payload.kind === "unusable") {
    deps.log.warn({ reason: payload.reason, status: official.status }, "server config passed on unchanged");
    relayBuffered(res, official);
    return;
  }
  sendPayload(res, official, withHttp2ForcedOff(payload.payload));
}
