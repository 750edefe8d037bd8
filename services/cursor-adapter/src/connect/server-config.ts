/**
 * GetServerConfig: the part of Cursor's server configuration the gateway owns.
 * HTTP/2 is forced off so the IDE uses the RunSSE + BidiAppend transport this
 * adapter serves (the edge proxy merges this into the upstream answer).
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
