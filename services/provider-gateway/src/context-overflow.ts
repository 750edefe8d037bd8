/**
 * Which endpoint errors mean "the request did not fit the context window"
 * (ModelFailureKind.CONTEXT_OVERFLOW), per endpoint kind. The run worker
 * answers this kind with one compaction and one retry, so it must not match
 * anything compaction cannot fix (auth, rate limits, a bad request shape).
 *
 * - openai-chat / openai-responses: `code` context_length_exceeded (OpenAI,
 *   before the stream as HTTP 400 `{error:{code}}`, in a Responses stream as
 *   an `error` event or `response.failed` with `error.code`), GitHub Copilot's
 *   model_max_prompt_tokens_exceeded, and the message wording of compatible
 *   servers without a code ("This model's maximum context length is N tokens",
 *   "context window exceeded", "prompt is too long").
 * - anthropic: invalid_request_error whose message says "prompt is too long:
 *   N tokens > M maximum" or "input length and `max_tokens` exceed context
 *   limit". (request_too_large is the request's byte size, not its tokens.)
 */
import type { ProviderKind } from "@byok/platform";

export interface EndpointError {
  /** The endpoint's error code, or its error type when it has no code. */
  readonly code: string | undefined;
  readonly message: string | undefined;
}

const OPENAI_CODES = new Set(["context_length_exceeded", "model_max_prompt_tokens_exceeded", "string_above_max_length_tokens"]);
const OPENAI_WORDING = [/maximum context length is \d+ tokens/i, /context window (?:exceeded|is exceeded)/i, /prompt is too long/i, /context_length_exceeded/i];
const ANTHROPIC_WORDING = [/prompt is too long/i, /exceed(?:s)? (?:the )?context (?:limit|window)/i];

export function isContextOverflow(kind: ProviderKind, error: EndpointError): boolean {
  const message = error.message ?? "";
  switch (kind) {
    case "openai-chat":
    case "openai-responses":
      return (error.code !== undefined && OPENAI_CODES.has(error.code)) || OPENAI_WORDING.some((re) => re.test(message));
    case "anthropic":
      return (error.code === undefined || error.code === "invalid_request_error") && ANTHROPIC_WORDING.some((re) => re.test(message));
    default: {
      const never: never = kind;
      throw new Error(`unknown provider kind ${String(never)}`);
    }
  }
}
