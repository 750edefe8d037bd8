/** The anthropic adapter: the Messages API through the Anthropic SDK. */
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages";
import type { ProviderAdapter } from "../adapter.ts";
import { prepareWith } from "../prepare.ts";
import { decodeReplay } from "../replay-codec.ts";
import { anthropicPassThroughTarget, anthropicSendFailure, createAnthropicClient } from "./client.ts";
import { anthropicReplaySchema } from "./replay.ts";
import { buildAnthropicRequest } from "./request.ts";
import { AnthropicStreamDecoder } from "./stream.ts";

export const anthropicAdapter: ProviderAdapter = {
  kind: "anthropic",
  bind(route, log) {
    const client = createAnthropicClient(route, log);
    return {
      route,
      prepare: (request) =>
        prepareWith(
          () => buildAnthropicRequest(request, route),
          // Our body is built from our own typed shapes (thinking/output_config variants the SDK version may not list).
          (body, signal) => client.messages.create(body as unknown as MessageCreateParamsStreaming, { signal }).asResponse(),
        ),
      toSendFailure: anthropicSendFailure,
      createDecoder: (writer) => new AnthropicStreamDecoder(writer, route),
      passThroughTarget: (request) => anthropicPassThroughTarget(route, request),
      hasOpaqueReplay: (replay) => decodeReplay(replay, route, anthropicReplaySchema)?.layout.some((slot) => slot.kind === "opaque") === true,
    };
  },
};
