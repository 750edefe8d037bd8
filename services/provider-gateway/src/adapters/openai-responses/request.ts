/**
 * ModelRequest -> Responses request body (provider-stream-semantics.md §2).
 * Stateless: `store:false`, the whole history as `input`, never
 * previous_response_id. Reasoning routes ask for
 * `include:["reasoning.encrypted_content"]` so reasoning items can be replayed.
 * - ModelSpec: effort -> `reasoning.effort`, max output -> `max_output_tokens`.
 * - Model config: reasoningSummary -> `reasoning.summary` (after the effort, as
 *   in the recorded o3-mini request), so summaries stream as thinking.
 * - PromptSpec: system text -> `instructions`; tools -> flat function tools
 *   with `strict:false` (our schemas are not strict-mode schemas).
 * - History: user `input_text`/`input_image`; assistant turns of this route
 *   rebuilt from their replay state (reasoning items verbatim, in order);
 *   other assistant turns as output_text messages + `function_call` items
 *   (visible reasoning is not replayable and is left out);
 *   tool results -> `function_call_output` with the call_id.
 * Deterministic, and `input` is the last key (byte-prefix property).
 */
import type { AssistantMessage, Message, ModelRequest } from "@byok/contracts";
import type { Effort, ReasoningSummary } from "@byok/platform";
import type { Route } from "../../routes.ts";
import { RequestRejection } from "../adapter.ts";
import { checkToolCallArguments, imageDataUrl, toolParameters, userParts } from "../history.ts";
import { checkSpec, resolveEffort, resolveMaxOutputTokens } from "../model-spec.ts";
import { decodeReplay } from "../replay-codec.ts";
import { mergeLayout, visibleParts, type MergedPart } from "../replay-layout.ts";
import { responsesReplaySchema, type ReasoningItem, type ResponsesTextMeta } from "./replay.ts";

type InputItem =
  | { type: "message"; role: "user"; content: Array<{ type: "input_text"; text: string } | { type: "input_image"; image_url: string; detail: "auto" }> }
  | { type: "message"; role: "assistant"; content: Array<{ type: "output_text"; text: string; annotations: [] }>; phase?: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string }
  | ReasoningItem;

export interface ResponsesRequestBody {
  model: string;
  stream: true;
  store: false;
  include?: ["reasoning.encrypted_content"];
  reasoning?: ReasoningParams;
  max_output_tokens?: number;
  instructions?: string;
  tools?: Array<{ type: "function"; name: string; description: string; parameters: Record<string, unknown>; strict: false }>;
  input: InputItem[];
}

/** Key order is fixed (effort, then summary): bodies must be byte-identical for identical requests. */
interface ReasoningParams {
  effort?: Effort;
  summary?: ReasoningSummary;
}

export function buildResponsesRequest(request: ModelRequest, route: Route): ResponsesRequestBody {
  checkSpec(request.spec, route);
  const effort = resolveEffort(request.spec, route);
  const maxTokens = resolveMaxOutputTokens(request.spec, route);
  const tools = request.prompt?.tools ?? [];
  const system = request.prompt?.systemText ?? "";
  const reasoning: ReasoningParams = {
    ...(effort === undefined ? {} : { effort }),
    ...(route.reasoningSummary === undefined || request.spec?.disableThinking === true ? {} : { summary: route.reasoningSummary }),
  };
  const input: InputItem[] = [];
  for (const message of request.messages) input.push(...inputItems(message, route));
  return {
    model: route.upstreamModel,
    stream: true,
    store: false,
    ...(route.supportsThinking ? { include: ["reasoning.encrypted_content"] as ["reasoning.encrypted_content"] } : {}),
    ...(reasoning.effort === undefined && reasoning.summary === undefined ? {} : { reasoning }),
    ...(maxTokens === undefined ? {} : { max_output_tokens: maxTokens }),
    ...(system === "" ? {} : { instructions: system }),
    ...(tools.length === 0
      ? {}
      : { tools: tools.map((t) => ({ type: "function" as const, name: t.name, description: t.description, parameters: toolParameters(t), strict: false as const })) }),
    input,
  };
}

function inputItems(message: Message, route: Route): InputItem[] {
  const body = message.body;
  switch (body.case) {
    case "user":
      return [
        {
          type: "message",
          role: "user",
          content: userParts(body.value.content, route).map((p) =>
            p.kind === "text" ? { type: "input_text" as const, text: p.text } : { type: "input_image" as const, image_url: imageDataUrl(p.image), detail: "auto" as const },
          ),
        },
      ];
    case "assistant":
      return assistantItems(body.value, route);
    case "toolResult":
      return [{ type: "function_call_output", call_id: body.value.callId, output: body.value.content }];
    case undefined:
      throw new RequestRejection("invalid_request", "history message without a body");
    default: {
      const never: never = body;
      throw new RequestRejection("invalid_request", `unknown history message ${JSON.stringify(never)}`);
    }
  }
}

function assistantItems(message: AssistantMessage, route: Route): InputItem[] {
  for (const part of message.content) {
    if (part.part.case === "image" || part.part.case === undefined)
      throw new RequestRejection("invalid_request", `assistant message with a ${part.part.case ?? "empty"} part`);
  }
  const replay = decodeReplay(message.replay, route, responsesReplaySchema);
  const merged: Array<MergedPart<ReasoningItem, ResponsesTextMeta>> | undefined =
    replay === undefined ? undefined : mergeLayout<ReasoningItem, ResponsesTextMeta>(replay.layout, message.content);
  const parts = merged ?? visibleParts(message.content);
  const items: InputItem[] = [];
  let open: { item: Extract<InputItem, { role: "assistant" }>; message: number | undefined } | undefined;
  for (const part of parts) {
    switch (part.kind) {
      case "opaque":
        open = undefined;
        items.push(part.value);
        break;
      case "text": {
        const meta = "meta" in part ? part.meta : undefined;
        const messageNo = meta?.message;
        if (open === undefined || open.message !== messageNo || messageNo === undefined) {
          const item: Extract<InputItem, { role: "assistant" }> = {
            type: "message",
            role: "assistant",
            content: [],
            ...(meta?.phase === undefined ? {} : { phase: meta.phase }),
          };
          items.push(item);
          open = { item, message: messageNo };
        }
        open.item.content.push({ type: "output_text", text: part.text, annotations: [] });
        break;
      }
      case "tool_call":
        open = undefined;
        items.push({ type: "function_call", call_id: part.call.callId, name: part.call.name, arguments: checkToolCallArguments(part.call) });
        break;
      default: {
        const never: never = part;
        throw new RequestRejection("invalid_request", `unknown assistant part ${JSON.stringify(never)}`);
      }
    }
  }
  return items;
}
