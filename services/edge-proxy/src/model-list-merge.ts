/**
 * Model lists: Cursor's official answer merged with the BYOK models, and the
 * default-model answers with a BYOK fallback.
 *
 * The BYOK list has one owner, the adapter (its own AvailableModels /
 * GetUsableModels endpoints); the proxy only combines bytes. Merging relies on
 * protobuf concatenation: parsing A‖B merges repeated fields, so the BYOK
 * entries are appended to the official lists. If upstream fails (network,
 * non-2xx, compressed, not a model list) the client gets the BYOK list alone;
 * official models are visible exactly when the member's Cursor account works.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "./http-body.ts";
import { MAX_UNARY_ANSWER_BYTES, type InterceptDeps, type TunnelInfo } from "./proxy-context.ts";
import type { ModelListMerge } from "./routing.ts";
import type { DescMessage } from "@bufbuild/protobuf";
import { MEMBER_HEADER, fetchBuffered, sendProxyError, type BufferedResponse, type Origin } from "./upstream.ts";
import { relayBuffered, sendPayload, unaryPayload } from "./unary-payload.ts";

const MAX_REQUEST_BYTES = 1024 * 1024;

/** Ask origins for uncompressed answers so that bytes can be combined. */
const IDENTITY = { "accept-encoding": "identity", "connect-accept-encoding": "identity" } as const;

/** The merged payload: official entries first, then the BYOK ones. */
export function concatModelLists(upstreamPayload: Buffer, byokPayload: Buffer): Buffer {
  return Buffer.concat([upstreamPayload, byokPayload]);
}

export interface ModelListRoute {
  merge: ModelListMerge;
  responseSchema: DescMessage | undefined;
}

export async function answerModelList(req: IncomingMessage, res: ServerResponse, route: ModelListRoute, tunnel: TunnelInfo, deps: InterceptDeps): Promise<void> {
  const read = await readBody(req, MAX_REQUEST_BYTES);
  if (read.kind !== "ok") {
    if (read.kind === "too_large") sendProxyError(res, 413, "resource_exhausted", "request body too large");
    else res.destroy();
    return;
  }
  const upstream = deps.upstreamFor(tunnel);
  const log = deps.log.child({ path: req.url, member_id: tunnel.memberId });
  const fetchFrom = (origin: Origin, set: Record<string, string>): Promise<BufferedResponse> =>
    fetchBuffered(req, origin, { body: read.bytes, set, timeoutMs: deps.upstreamUnaryTimeoutMs, connectTimeoutMs: deps.connectTimeoutMs, maxBytes: MAX_UNARY_ANSWER_BYTES });
  const askUpstream = (): Promise<BufferedResponse> => fetchFrom(upstream, { ...IDENTITY });
  const askAdapter = (): Promise<BufferedResponse> => fetchFrom(deps.adapter, { ...IDENTITY, [MEMBER_HEADER]: tunnel.memberId });

  switch (route.merge) {
    case "concat": {
      const [official, byok] = await Promise.all([askUpstream(), askAdapter()]);
      const officialPayload = unaryPayload(official, route.responseSchema);
      const byokPayload = unaryPayload(byok, route.responseSchema);
      if (officialPayload.kind === "ok" && byokPayload.kind === "ok" && official.kind === "response") {
        sendPayload(res, official, concatModelLists(officialPayload.payload, byokPayload.payload));
        return;
      }
      if (byokPayload.kind === "ok" && byok.kind === "response") {
        if (officialPayload.kind === "unusable") log.info({ reason: officialPayload.reason }, "official model list unavailable; answering with BYOK models only");
        relayBuffered(res, byok);
        return;
      }
      if (byokPayload.kind === "unusable") log.error({ reason: byokPayload.reason }, "BYOK model list unavailable from the adapter");
      // No BYOK list: the official answer (or its error) as it came.
      if (official.kind === "response") relayBuffered(res, official);
      else sendProxyError(res, 502, "unavailable", `model list unavailable: upstream ${official.message}`);
      return;
    }
    case "fallback": {
      const official = await askUpstream();
      if (unaryPayload(official, route.responseSchema).kind === "ok" && official.kind === "response") {
        relayBuffered(res, official);
        return;
      }
      const byok = await askAdapter();
      if (unaryPayload(byok, route.responseSchema).kind === "ok" && byok.kind === "response") {
        relayBuffered(res, byok);
        return;
      }
      if (official.kind === "response") relayBuffered(res, official);
      else sendProxyError(res, 502, "unavailable", `upstream failed: ${official.message}`);
      return;
    }
    default: {
      const never: never = route.merge;
      throw new Error(`unknown merge ${String(never)}`);
    }
  }
}
