/**
 * Expectations derived from a recorded OpenAI Chat Completions stream (.sse),
 * so end-to-end tests compare against the fixture itself instead of a copy:
 * the concatenated content deltas and the usage the endpoint reported.
 */
import { readFileSync } from "node:fs";

export interface ChatFixtureUsage {
  inputTokens: number;
  outputTokens: number;
  /** undefined when the recording does not report it. */
  cachedInputTokens: number | undefined;
  reasoningTokens: number | undefined;
}

export interface ChatFixture {
  text: string;
  usage: ChatFixtureUsage | undefined;
}

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null } }>;
  usage?: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details?: { cached_tokens?: number };
    completion_tokens_details?: { reasoning_tokens?: number };
  } | null;
}

export function readChatFixture(file: string): ChatFixture {
  let text = "";
  let usage: ChatFixtureUsage | undefined;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("data:")) continue;
    const payload = line.slice(5).trim();
    if (payload === "[DONE]" || payload === "") continue;
    const chunk = JSON.parse(payload) as ChatChunk;
    for (const choice of chunk.choices ?? []) text += choice.delta?.content ?? "";
    if (chunk.usage) {
      usage = {
        inputTokens: chunk.usage.prompt_tokens,
        outputTokens: chunk.usage.completion_tokens,
        cachedInputTokens: chunk.usage.prompt_tokens_details?.cached_tokens,
        reasoningTokens: chunk.usage.completion_tokens_details?.reasoning_tokens,
      };
    }
  }
  return { text, usage };
}
