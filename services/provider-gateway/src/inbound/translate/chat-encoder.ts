/**
 * ModelEvents -> an OpenAI Chat Completions answer. Streamed: a first chunk
 * with the assistant role, then `delta.content` for text,
 * `delta.reasoning_content` for thinking (the field compatible servers and
 * their clients use), `delta.tool_calls` fragments (id and name first, then
 * the arguments as they stream, slot by slot), a finish chunk
 * (stop / tool_calls / length / content_filter), the usage chunk when the
 * client asked for it, and `data: [DONE]`. An error after the first byte is
 * a `data: {"error":...}` chunk without [DONE]. Collected: one
 * chat.completion object.
 */
import type { ModelEventBody, UsageInit } from "../../events.ts";
import { sendError, sendJson, startSse } from "../http-answers.ts";
import { inStreamError } from "../in-stream-error.ts";
import { sseEvent, tokenCount, type EncoderContext, type TurnEncoder, type TurnEnd } from "./turn-encoder.ts";

const FINISH_REASONS = { stop: "stop", tool_use: "tool_calls", length: "length", refusal: "content_filter" } as const;

export class ChatEncoder implements TurnEncoder {
  readonly #ctx: EncoderContext;
  #text = "";
  #reasoning = "";
  readonly #tools: Array<{ id: string; name: string; args: string }> = [];
  readonly #slots = new Map<number, { slot: number; streamed: string }>();

  constructor(ctx: EncoderContext) {
    this.#ctx = ctx;
  }

  begin(): void {
    if (!this.#ctx.stream) return;
    startSse(this.#ctx.res);
    this.#chunk({ role: "assistant", content: "" });
  }

  event(event: ModelEventBody): void {
    switch (event.case) {
      case "textDelta": {
        const text = event.value.text ?? "";
        this.#text += text;
        this.#chunk({ content: text });
        return;
      }
      case "thinkingDelta": {
        const text = event.value.text ?? "";
        this.#reasoning += text;
        this.#chunk({ reasoning_content: text });
        return;
      }
      case "toolCallStart": {
        const slot = this.#tools.length;
        const id = event.value.callId ?? "";
        const name = event.value.name ?? "";
        this.#tools.push({ id, name, args: "" });
        this.#slots.set(event.value.index ?? 0, { slot, streamed: "" });
        this.#chunk({ tool_calls: [{ index: slot, id, type: "function", function: { name, arguments: "" } }] });
        return;
      }
      case "toolCallArgsDelta": {
        const slot = this.#slots.get(event.value.index ?? 0);
        if (slot === undefined) return;
        const delta = event.value.delta ?? "";
        slot.streamed += delta;
        this.#argsChunk(slot.slot, delta);
        return;
      }
      case "toolCallEnd": {
        const slot = this.#slots.get(event.value.index ?? 0);
        if (slot === undefined) return;
        const final = event.value.argumentsJson ?? "{}";
        if (final !== slot.streamed && final.startsWith(slot.streamed)) this.#argsChunk(slot.slot, final.slice(slot.streamed.length));
        (this.#tools[slot.slot] as { args: string }).args = final;
        return;
      }
      default:
        return;
    }
  }

  finish(end: TurnEnd): void {
    const { res } = this.#ctx;
    if (end.kind === "failed") {
      if (!this.#ctx.stream) {
        sendError(res, "openai-chat", end.error);
        return;
      }
      res.end(inStreamError("openai-chat", end.error));
      return;
    }
    const finishReason = FINISH_REASONS[end.stop];
    const usage = chatUsage(end.usage);
    if (!this.#ctx.stream) {
      const message: Record<string, unknown> = {
        role: "assistant",
        content: this.#text === "" && this.#tools.length > 0 ? null : this.#text,
        ...(this.#reasoning === "" ? {} : { reasoning_content: this.#reasoning }),
        ...(this.#tools.length === 0 ? {} : { tool_calls: this.#tools.map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: t.args } })) }),
        refusal: null,
      };
      sendJson(res, 200, {
        id: `chatcmpl-${this.#ctx.id}`,
        object: "chat.completion",
        created: this.#ctx.created,
        model: this.#ctx.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        ...(usage === undefined ? {} : { usage }),
      });
      return;
    }
    this.#chunk({}, finishReason);
    if (this.#ctx.includeUsage) res.write(sseEvent(undefined, { ...this.#envelope(), choices: [], usage: usage ?? null }));
    res.end("data: [DONE]\n\n");
  }

  #argsChunk(slot: number, delta: string): void {
    if (delta !== "") this.#chunk({ tool_calls: [{ index: slot, function: { arguments: delta } }] });
  }

  #chunk(delta: Record<string, unknown>, finishReason: string | null = null): void {
    if (!this.#ctx.stream) return;
    this.#ctx.res.write(sseEvent(undefined, { ...this.#envelope(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] }));
  }

  #envelope(): Record<string, unknown> {
    return { id: `chatcmpl-${this.#ctx.id}`, object: "chat.completion.chunk", created: this.#ctx.created, model: this.#ctx.model };
  }
}

/** Chat usage from the neutral figures (prompt_tokens = the whole prompt; cached and reasoning tokens as details). */
export function chatUsage(usage: UsageInit | undefined): Record<string, unknown> | undefined {
  if (usage === undefined) return undefined;
  const prompt = tokenCount(usage.inputTokens);
  const completion = tokenCount(usage.outputTokens);
  const cached = tokenCount(usage.cacheReadTokens);
  const reasoning = tokenCount(usage.reasoningTokens);
  return {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    total_tokens: (prompt ?? 0) + (completion ?? 0),
    ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
    ...(reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: reasoning } }),
  };
}
