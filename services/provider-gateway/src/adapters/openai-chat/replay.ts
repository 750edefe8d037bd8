/**
 * openai-chat replay state: the reasoning text an OpenAI-compatible server
 * streamed (`reasoning_content`, or Groq/OpenRouter's `reasoning`) and the
 * field it came in. Sent back on the assistant message only to the route that
 * produced it, and only when the route is configured to replay it
 * (replayReasoningContent: DeepSeek thinking-mode tool loops, Z.ai preserved
 * thinking). OpenAI's own chat endpoint streams no reasoning: nothing to keep.
 */
import { z } from "zod";

export const chatReasoningFields = ["reasoning_content", "reasoning"] as const;
export type ChatReasoningField = (typeof chatReasoningFields)[number];

export const chatReplaySchema = z.object({
  v: z.literal(1),
  reasoning: z.object({ field: z.enum(chatReasoningFields), text: z.string() }).optional(),
});

export type ChatReplay = z.infer<typeof chatReplaySchema>;
