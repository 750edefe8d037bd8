/**
 * GetServerConfig as the adapter answers it when a client talks to it
 * directly (no edge proxy): HTTP/2 forced off, so the IDE uses the RunSSE +
 * BidiAppend transport this adapter serves. Through the edge proxy this answer
 * is not used: the proxy takes Cursor's own answer and forces HTTP/2 off in it
 * (edge-proxy server-config.ts).
 */
import { create } from "@bufbuild/protobuf";
import { aiserver } from "@byok/cursor-protocol";

export const SERVER_CONFIG_VERSION = "byok-gateway-1";

export function serverConfigResponse(): aiserver.GetServerConfigResponse {
  return create(aiserver.GetServerConfigResponseSchema, {
    configVersion: SERVER_CONFIG_VERSION,
    http2Config: aiserver.Http2Config.FORCE_ALL_DISABLED,
  });
}
