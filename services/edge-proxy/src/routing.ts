/**
 * Routing decisions for intercepted Cursor traffic.
 *
 * Level 1 (host + path): the agent transport (RunSSE, BidiAppend), the model
 * lists and the server config get special handling; every other request goes
 * to the upstream origin unchanged.
 *
 * Level 2 (per run): the first BidiAppend of a request id (append_seqno 0,
 * a run_request or prewarm_request) names the model. A BYOK model id (from the
 * gateway config) makes the whole run local (cursor-adapter); anything else
 * sends both halves of the run upstream.
 */
import { fromBinary, fromJsonString, type DescMessage } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";

export type ModelListMerge =
  /** Upstream list + BYOK list (protobuf concatenation); BYOK alone when upstream fails. */
  | "concat"
  /** Upstream answer; the adapter's answer only when upstream fails. */
  | "fallback";

export type PathRoute =
  | { kind: "run_sse" }
  | { kind: "bidi_append" }
  | { kind: "model_list"; merge: ModelListMerge; responseSchema: DescMessage | undefined }
  | { kind: "server_config" }
  | { kind: "upstream" };

export const RUN_SSE_PATH = "/agent.v1.AgentService/RunSSE";
export const BIDI_APPEND_PATH = "/aiserver.v1.BidiService/BidiAppend";

const SPECIAL_PATHS: ReadonlyMap<string, PathRoute> = new Map<string, PathRoute>([
  [RUN_SSE_PATH, { kind: "run_sse" }],
  [BIDI_APPEND_PATH, { kind: "bidi_append" }],
  ["/aiserver.v1.AiService/AvailableModels", { kind: "model_list", merge: "concat", responseSchema: aiserver.AvailableModelsResponseSchema }],
  ["/agent.v1.AgentService/GetUsableModels", { kind: "model_list", merge: "concat", responseSchema: agent.GetUsableModelsResponseSchema }],
  ["/aiserver.v1.AiService/GetUsableModels", { kind: "model_list", merge: "concat", responseSchema: agent.GetUsableModelsResponseSchema }],
  ["/agent.v1.AgentService/GetDefaultModelForCli", { kind: "model_list", merge: "fallback", responseSchema: undefined }],
  ["/aiserver.v1.AiService/GetDefaultModelForCli", { kind: "model_list", merge: "fallback", responseSchema: undefined }],
  ["/aiserver.v1.AiService/GetDefaultModel", { kind: "model_list", merge: "fallback", responseSchema: undefined }],
  ["/aiserver.v1.AiService/GetDefaultModelNudgeData", { kind: "model_list", merge: "fallback", responseSchema: undefined }],
  ["/aiserver.v1.AiService/GetServerConfig", { kind: "server_config" }],
  ["/aiserver.v1.ServerConfigService/GetServerConfig", { kind: "server_config" }],
]);

const UPSTREAM: PathRoute = { kind: "upstream" };

/** Level 1: what to do with a request on an intercepted host. */
export function classifyRequest(method: string | undefined, url: string | undefined): PathRoute {
  if (method !== "POST" || !url) return UPSTREAM;
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  return SPECIAL_PATHS.get(path) ?? UPSTREAM;
}

export type RunRoute = "local" | "upstream";

/** Level 2: a run is local exactly when it names a BYOK model. */
export function routeForModel(modelId: string | undefined, byokModelIds: ReadonlySet<string>): RunRoute {
  return modelId !== undefined && byokModelIds.has(modelId) ? "local" : "upstream";
}

export type AppendInspection =
  /** The body is not a BidiAppendRequest at all. */
  | { kind: "unreadable" }
  /** A BidiAppendRequest whose data is not an agent message (e.g. speech-to-text). */
  | { kind: "foreign"; requestId: string; seqno: bigint }
  /** The message that starts a run: run_request or prewarm_request. */
  | { kind: "run_start"; requestId: string; seqno: bigint; modelId: string | undefined; conversationId: string | undefined }
  /** Any later agent message of a run. */
  | { kind: "agent_message"; requestId: string; seqno: bigint };

function isJson(contentType: string | undefined): boolean {
  return (contentType ?? "").toLowerCase().startsWith("application/json");
}

/** Decodes a (content-decoded) BidiAppend body far enough to route it. */
export function inspectBidiAppend(body: Uint8Array, contentType: string | undefined): AppendInspection {
  let request: aiserver.BidiAppendRequest;
  try {
    request = isJson(contentType)
      ? fromJsonString(aiserver.BidiAppendRequestSchema, Buffer.from(body).toString("utf8"), { ignoreUnknownFields: true })
      : fromBinary(aiserver.BidiAppendRequestSchema, body);
  } catch {
    return { kind: "unreadable" };
  }
  const requestId = request.requestId?.requestId ?? "";
  if (requestId === "") return { kind: "unreadable" };
  const seqno = request.appendSeqno;
  const data = request.data;
  if (data.length === 0 || data.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(data)) return { kind: "foreign", requestId, seqno };
  let message: agent.AgentClientMessage;
  try {
    message = fromBinary(agent.AgentClientMessageSchema, Buffer.from(data, "hex"));
  } catch {
    return { kind: "foreign", requestId, seqno };
  }
  switch (message.message.case) {
    case "runRequest":
    case "prewarmRequest": {
      const start = message.message.value;
      const modelId = nonEmpty(start.requestedModel?.modelId) ?? nonEmpty(start.modelDetails?.modelId);
      return { kind: "run_start", requestId, seqno, modelId, conversationId: nonEmpty(start.conversationId) };
    }
    case undefined:
      return { kind: "foreign", requestId, seqno };
    default:
      return { kind: "agent_message", requestId, seqno };
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** The request id in a RunSSE request message (BidiRequestId bytes, envelope removed). */
export function runSseRequestId(message: Uint8Array): string | undefined {
  try {
    const id = fromBinary(agent.BidiRequestIdSchema, message).requestId;
    return id === "" ? undefined : id;
  } catch {
    return undefined;
  }
}
