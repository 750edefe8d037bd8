/** The openai-responses adapter: the Responses API through the OpenAI SDK. */
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import type { ProviderAdapter } from "../adapter.ts";
import { createOpenAiClient, openAiPassThroughTarget, openAiSendFailure } from "../openai-client.ts";
import { prepareWith } from "../prepare.ts";
import { decodeReplay } from "../replay-codec.ts";
import { responsesReplaySchema } from "./replay.ts";
import { buildResponsesRequest } from "./request.ts";
import { ResponsesStreamDecoder } from "./stream.ts";

export const openAiResponsesAdapter: ProviderAdapter = {
  kind: "openai-responses",
  bind(route, log) {
    const client = createOpenAiClient(route, log);
    return {
      route,
      prepare: (request) =>
        prepareWith(
          () => buildResponsesRequest(request, route),
          // Replayed reasoning items are passed through verbatim, which the SDK's input types cannot express.
          (body, signal) => client.responses.create(body as unknown as ResponseCreateParamsStreaming, { signal }).asResponse(),
        ),
      toSendFailure: openAiSendFailure,
      createDecoder: (writer) => new ResponsesStreamDecoder(writer, route),
      passThroughTarget: (request) => openAiPassThroughTarget(route, "/responses", request),
      hasOpaqueReplay: (replay) => decodeReplay(replay, route, responsesReplaySchema)?.layout.some((slot) => slot.kind === "opaque") === true,
    };
  },
};
