/**
 * Anthropic prompt caching (provider-stream-semantics.md §3.8): where the
 * request carries `cache_control`, decided from the request alone, so call n+1
 * puts its breakpoints where call n put them and reads what call n wrote.
 *
 * - End of system + tools: the last system block (or the last tool when there
 *   is no system text). The prompt spec is frozen for a run, so this prefix is
 *   the same for every call of the run and of later runs in the same mode.
 * - End of the history, two ways (`promptCacheBreakpoints`):
 *   "automatic" (default): the request-level `cache_control`, which the API
 *   places on the last cacheable block and moves forward itself; no marker in
 *   the messages, so the body of call n stays a byte prefix of call n+1's.
 *   "blocks": explicit markers on the last block of the last message and of
 *   the last user message that an assistant message answered (the end of the
 *   previous request), for endpoints without automatic caching. A marker that
 *   moves on changes the bytes where it was: the body is then a byte prefix of
 *   the previous one only up to that point (the cached content is unchanged).
 * At most three breakpoints: below the API's limit of four.
 */
import type { AnthropicCacheControl, AnthropicMessage, AnthropicSystemBlock, AnthropicTool } from "./request.ts";

export type CacheBreakpointMode = "automatic" | "blocks";

const EPHEMERAL: AnthropicCacheControl = { type: "ephemeral" };

/** System text as blocks, the last one marked; or the tools with the last one marked when there is no system text. */
export function markSystemAndTools(system: string, tools: AnthropicTool[]): { system: AnthropicSystemBlock[] | undefined; tools: AnthropicTool[] } {
  if (system !== "") return { system: [{ type: "text", text: system, cache_control: EPHEMERAL }], tools };
  const last = tools.at(-1);
  if (last === undefined) return { system: undefined, tools };
  return { system: undefined, tools: [...tools.slice(0, -1), { ...last, cache_control: EPHEMERAL }] };
}

/** "blocks" mode: marks the last message and the previous request's end (user messages only: their blocks are cacheable). */
export function markHistory(messages: AnthropicMessage[]): void {
  const lastIndex = messages.length - 1;
  const last = messages[lastIndex];
  if (last?.role === "user") markLastBlock(last);
  for (let i = lastIndex - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "user" && messages[i + 1]?.role === "assistant") {
      markLastBlock(message);
      return;
    }
  }
}

/** The request-level automatic breakpoint. */
export function automaticBreakpoint(): AnthropicCacheControl {
  return EPHEMERAL;
}

function markLastBlock(message: Extract<AnthropicMessage, { role: "user" }>): void {
  const block = message.content.at(-1);
  if (block !== undefined) block.cache_control = EPHEMERAL;
}
