/**
 * A request whose format is not the route's endpoint kind: decoded into the
 * provider-neutral ModelRequest, its assistant turns given back their kept
 * replay state (replay-store.ts), run through the route's adapter like any
 * model call (runModelCall: the adapter's request builder, retries before the
 * first byte, the stream decoder and the ModelEvent writer), and the
 * ModelEvents encoded in the client's format as they come.
 *
 * The HTTP status is decided at the call's `start` (the endpoint answered
 * 2xx): a failure before it is an error answer with its status; after it the
 * answer is 200 and a failure is the client format's in-stream error. The
 * output limit and refusals are normal stops for these clients (length /
 * max_tokens / incomplete), with what was produced. A completed call whose
 * replay state carries opaque items is kept before the answer's last event
 * goes out.
 */
import { create } from "@bufbuild/protobuf";
import { ModelFailureKind, ReplayStateSchema, StopReason, type ModelRequest, type ReplayState } from "@byok/contracts";
import { ModelStreamAssembly } from "@byok/model-stream";
import { callUsageOf } from "../../accounting/call-accounting.ts";
import type { ModelEventBody, UsageInit } from "../../events.ts";
import { GATEWAY_SHUTDOWN, runModelCall } from "../../model-call.ts";
import { errorOfFailure, InboundError } from "../client-errors.ts";
import { sendError } from "../http-answers.ts";
import type { CallResult, InboundCall } from "../inbound-call.ts";
import { replayKey, type ReplayStore } from "../replay-store.ts";
import { ChatEncoder } from "./chat-encoder.ts";
import { chatRequest } from "./chat-request.ts";
import { MessagesEncoder } from "./messages-encoder.ts";
import { messagesRequest } from "./messages-request.ts";
import type { DecodeContext } from "./neutral-request.ts";
import { ResponsesEncoder } from "./responses-encoder.ts";
import { responsesRequest } from "./responses-request.ts";
import type { EncoderContext, TurnEncoder, TurnEnd } from "./turn-encoder.ts";

export async function translateCall(call: InboundCall, replay: ReplayStore): Promise<CallResult> {
  const request = decodeRequest(call);
  await restoreReplay(request, call, replay);
  const encoder = encoderFor(call);
  const assembly = new ModelStreamAssembly();
  let firstByteMs: number | undefined;
  let terminal: ModelEventBody | undefined;
  let usage: UsageInit | undefined;
  let replayState: ModelEventBody | undefined;
  await runModelCall(
    call.adapter,
    request,
    (event) => {
      call.observer?.published(event);
      assembly.add(event);
      switch (event.case) {
        case "start":
          firstByteMs = Date.now() - call.started;
          encoder.begin();
          return;
        case "keepalive":
          return;
        case "replay":
          replayState = event;
          return;
        case "usage":
          usage = event.value;
          return;
        case "done":
        case "failure":
          terminal = event;
          return;
        default:
          encoder.event(event);
      }
    },
    {
      signal: call.signal,
      log: call.log,
      maxRetryAfterMs: call.policy.maxRetryAfterMs,
      backoff: { baseDelayMs: call.policy.baseDelayMs, maxDelayMs: call.policy.maxDelayMs },
      ...(call.observer === undefined ? {} : { observer: call.observer }),
    },
  );
  const result = { usage: callUsageOf(usage), firstByteMs };
  const end = terminal as ModelEventBody | undefined;
  if (end?.case === "done") {
    const state = replayState?.case === "replay" ? create(ReplayStateSchema, replayState.value) : undefined;
    await keepReplay(call, replay, assembly, state);
    encoder.finish({ kind: "completed", stop: end.value.reason === StopReason.TOOL_USE ? "tool_use" : "stop", usage });
    return { ...result, outcome: "ok" };
  }
  const failure = end?.case === "failure" ? end.value : { kind: ModelFailureKind.PROTOCOL, message: "the call ended without a terminal event" };
  const kind = failure.kind ?? ModelFailureKind.UNSPECIFIED;
  const outcome = ModelFailureKind[kind] ?? "failed";
  if (kind === ModelFailureKind.CANCELLED) {
    call.res.destroy();
    return { ...result, outcome };
  }
  // The gateway stopping is our unavailability, not the provider's.
  const error = call.signal.reason === GATEWAY_SHUTDOWN ? new InboundError("unavailable", "the gateway is stopping; try again") : errorOfFailure(failure);
  if (firstByteMs === undefined) {
    sendError(call.res, call.format, error);
    return { ...result, outcome };
  }
  const stopped: TurnEnd | undefined =
    kind === ModelFailureKind.LENGTH ? { kind: "completed", stop: "length", usage } : kind === ModelFailureKind.REFUSAL ? { kind: "completed", stop: "refusal", usage } : undefined;
  encoder.finish(stopped ?? { kind: "failed", error, usage });
  return { ...result, outcome };
}

function decodeRequest(call: InboundCall): ModelRequest {
  const ctx: DecodeContext = { memberId: call.memberId, requestId: call.requestId, route: call.route };
  switch (call.format) {
    case "openai-chat":
      return chatRequest(call.body, ctx);
    case "openai-responses":
      return responsesRequest(call.body, ctx);
    case "anthropic":
      return messagesRequest(call.body, ctx);
    default: {
      const never: never = call.format;
      throw new InboundError("invalid_request", `unknown format ${String(never)}`);
    }
  }
}

function encoderFor(call: InboundCall): TurnEncoder {
  const streamOptions = call.body["stream_options"];
  const ctx: EncoderContext = {
    res: call.res,
    stream: call.stream,
    model: call.requestedModel,
    id: call.requestId.replace(/^req_/, ""),
    created: Math.floor(call.started / 1000),
    includeUsage: typeof streamOptions === "object" && streamOptions !== null && (streamOptions as Record<string, unknown>)["include_usage"] === true,
  };
  switch (call.format) {
    case "openai-chat":
      return new ChatEncoder(ctx);
    case "openai-responses":
      return new ResponsesEncoder(ctx);
    case "anthropic":
      return new MessagesEncoder(ctx);
    default: {
      const never: never = call.format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}

/** Gives each assistant turn of the history its kept message back (same route, same member, same visible content). */
async function restoreReplay(request: ModelRequest, call: InboundCall, replay: ReplayStore): Promise<void> {
  await Promise.all(
    request.messages.map(async (message) => {
      if (message.body.case !== "assistant") return;
      const key = replayKey(call.memberId, call.route.id, message.body.value);
      if (key === undefined) return;
      const kept = await replay.get(key);
      if (kept !== undefined) message.body.value = kept;
    }),
  );
}

async function keepReplay(call: InboundCall, replay: ReplayStore, assembly: ModelStreamAssembly, state: ReplayState | undefined): Promise<void> {
  if (state === undefined || !call.adapter.hasOpaqueReplay(state)) return;
  const { message } = assembly.assistantMessage(state);
  const key = replayKey(call.memberId, call.route.id, message);
  if (key !== undefined) await replay.put(key, message);
}
