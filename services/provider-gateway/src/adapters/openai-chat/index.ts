/** The openai-chat adapter: Chat Completions through the OpenAI SDK. */
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import type { ProviderAdapter } from "../adapter.ts";
import { createOpenAiClient, openAiPassThroughTarget, openAiSendFailure } from "../openai-client.ts";
import { prepareWith } from "../prepare.ts";
import { decodeReplay } from "../replay-codec.ts";
import { chatReplaySchema } from "./replay.ts";
import { buildChatRequest } from "./request.ts";
import { ChatStreamDecoder } from "./stream.ts";

export const openAiChatAdapter: ProviderAdapter = {
  kind: "openai-chat",
  bind(route, log) {
    const client = createOpenAiClient(route, log);
    return {
      route,
      prepare: (request) =>
        prepareWith(
          () => buildChatRequest(request, route),
          // Our body carries fields the SDK types do not list (reasoning_content on compatible servers).
          (body, signal) => client.chat.completions.create(body as unknown as ChatCompletionCreateParamsStreaming, { signal }).asResponse(),
        ),
      toSendFailure: openAiSendFailure,
      createDecoder: (writer) => new ChatStreamDecoder(writer, route),
      passThroughTarget: (request) => openAiPassThroughTarget(route, "/chat/completions", request),
      hasOpaqueReplay: (replay) => (decodeReplay(replay, route, chatReplaySchema)?.reasoning?.text ?? "") !== "",
    };
  },
};
