/**
 * Synthetic provider streams for the mock LLM, in each endpoint kind's own
 * event shape (the shapes of the recorded fixtures): a text answer or one
 * function/tool call, with the usage an endpoint reports. For tests and
 * benchmarks that need many varied responses (recordings are fixed).
 */
import type { MockEndpoint, StaticMockResponse, StreamShape } from "./mock-llm.ts";

export interface StreamUsage {
  readonly input: number;
  readonly output: number;
  /** Anthropic: cache_read_input_tokens (OpenAI: cached_tokens). */
  readonly cacheRead?: number;
  /** Anthropic: cache_creation_input_tokens. */
  readonly cacheWrite?: number;
}

export type StreamAnswer = { readonly text: string } | { readonly call: { readonly id: string; readonly name: string; readonly args: object } };

export function providerStream(endpoint: MockEndpoint, id: string, answer: StreamAnswer, usage: StreamUsage): StaticMockResponse {
  switch (endpoint) {
    case "openai-chat":
      return { kind: "chunks", endpoint, chunks: chatChunks(id, answer, usage) };
    case "openai-responses":
      return { kind: "chunks", endpoint, chunks: responsesEvents(id, answer, usage) };
    case "anthropic":
      return { kind: "chunks", endpoint, chunks: anthropicEvents(id, answer, usage) };
    default: {
      const never: never = endpoint;
      throw new Error(`unknown endpoint ${String(never)}`);
    }
  }
}

function chatChunks(id: string, answer: StreamAnswer, usage: StreamUsage): unknown[] {
  const base = { id, object: "chat.completion.chunk", created: 1_782_955_817, model: "gpt-4o-2024-08-06" };
  const chunk = (delta: object, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  const body =
    "text" in answer
      ? [chunk({ role: "assistant", content: "" }), chunk({ content: answer.text }), chunk({}, "stop")]
      : [
          chunk({ role: "assistant", content: null }),
          chunk({ tool_calls: [{ index: 0, id: answer.call.id, type: "function", function: { name: answer.call.name, arguments: "" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(answer.call.args) } }] }),
          chunk({}, "tool_calls"),
        ];
  return [
    ...body,
    {
      ...base,
      choices: [],
      usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output, prompt_tokens_details: { cached_tokens: usage.cacheRead ?? 0 } },
    },
  ];
}

function responsesEvents(id: string, answer: StreamAnswer, usage: StreamUsage): unknown[] {
  const response = (status: string, output: unknown[], withUsage: boolean) => ({
    id: `resp_${id}`,
    object: "response",
    status,
    output,
    usage: withUsage
      ? {
          input_tokens: usage.input,
          input_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
          output_tokens: usage.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.input + usage.output,
        }
      : null,
  });
  let seq = 0;
  const event = (type: string, fields: object) => ({ type, sequence_number: seq++, ...fields });
  const events: unknown[] = [event("response.created", { response: response("in_progress", [], false) })];
  let item: Record<string, unknown>;
  if ("text" in answer) {
    const itemId = `msg_${id}`;
    item = { id: itemId, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", annotations: [], text: answer.text }] };
    events.push(
      event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } }),
      event("response.content_part.added", { item_id: itemId, output_index: 0, content_index: 0, part: { type: "output_text", annotations: [], text: "" } }),
      event("response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta: answer.text }),
      event("response.output_text.done", { item_id: itemId, output_index: 0, content_index: 0, text: answer.text }),
      event("response.content_part.done", { item_id: itemId, output_index: 0, content_index: 0, part: { type: "output_text", annotations: [], text: answer.text } }),
    );
  } else {
    const itemId = `fc_${id}`;
    const args = JSON.stringify(answer.call.args);
    item = { id: itemId, type: "function_call", status: "completed", arguments: args, call_id: answer.call.id, name: answer.call.name };
    events.push(
      event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", arguments: "" } }),
      event("response.function_call_arguments.delta", { item_id: itemId, output_index: 0, delta: args }),
      event("response.function_call_arguments.done", { item_id: itemId, output_index: 0, arguments: args }),
    );
  }
  events.push(event("response.output_item.done", { output_index: 0, item }), event("response.completed", { response: response("completed", [item], true) }));
  return events;
}

function anthropicEvents(id: string, answer: StreamAnswer, usage: StreamUsage): unknown[] {
  const cache = { cache_creation_input_tokens: usage.cacheWrite ?? 0, cache_read_input_tokens: usage.cacheRead ?? 0 };
  const uncached = Math.max(0, usage.input - (usage.cacheWrite ?? 0) - (usage.cacheRead ?? 0));
  const block =
    "text" in answer
      ? [
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: answer.text } },
        ]
      : [
          { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: answer.call.id, name: answer.call.name, input: {} } },
          { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(answer.call.args) } },
        ];
  return [
    {
      type: "message_start",
      message: { id, type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [], stop_reason: null, usage: { input_tokens: uncached, ...cache, output_tokens: 1 } },
    },
    ...block,
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "text" in answer ? "end_turn" : "tool_use", stop_sequence: null }, usage: { input_tokens: uncached, ...cache, output_tokens: usage.output } },
    { type: "message_stop" },
  ];
}

/**
 * A chat-completions text answer in `chunkCount` content deltas ("w0 ", "w1 ", ...),
 * shaped by `shape` (e.g. { burst: true }: all at once; { eventIntervalMs: 33 }: paced);
 * `text` is what a client must see in the end.
 */
export function chatDeltaStream(id: string, chunkCount: number, shape: StreamShape = {}): { response: StaticMockResponse; text: string } {
  const base = { id, object: "chat.completion.chunk", created: 1_782_955_817, model: "gpt-4o-2024-08-06" };
  const chunk = (delta: object, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null });
  const words = Array.from({ length: chunkCount }, (_, i) => `w${i} `);
  const chunks = [
    chunk({ role: "assistant", content: "" }),
    ...words.map((w) => chunk({ content: w })),
    chunk({}, "stop"),
    { ...base, choices: [], usage: { prompt_tokens: 20, completion_tokens: chunkCount, total_tokens: 20 + chunkCount, prompt_tokens_details: { cached_tokens: 0 } } },
  ];
  return { response: { kind: "chunks", endpoint: "openai-chat", chunks, ...shape }, text: words.join("") };
}
