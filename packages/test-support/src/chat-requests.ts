/**
 * Readers of what the mock LLM received on its OpenAI Chat Completions
 * endpoint, for assertions in end-to-end tests: the messages of a request,
 * the text of a message's content, the run's own tool loop (what follows the
 * last user message), the names of the tools offered and the system text.
 */
import type { RecordedRequest } from "./mock-llm.ts";

export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export function chatMessages(request: RecordedRequest | undefined): ChatMessage[] {
  if (request === undefined) throw new Error("the mock LLM did not receive that request");
  return (request.body as { messages: ChatMessage[] }).messages;
}

/** The text of a message's content: a string as it is, the parts' text joined ("" for anything else). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Array<{ text?: string }>).map((p) => p.text ?? "").join("");
}

/** The messages after the last user message of a request (the run's own tool loop). */
export function afterLastUser(messages: readonly ChatMessage[]): ChatMessage[] {
  const last = messages.map((m) => m.role).lastIndexOf("user");
  return messages.slice(last + 1);
}

/** The names of the function tools a request offered. */
export function toolNames(body: unknown): string[] {
  return ((body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);
}

/** The text of a request's system message ("" without one). */
export function systemText(body: unknown): string {
  return textOf((body as { messages: ChatMessage[] }).messages.find((m) => m.role === "system")?.content);
}
