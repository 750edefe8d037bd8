/**
 * The three client encoders, read by the official SDKs: for any model call
 * made of text, thinking and tool-call blocks (interleaved as chat routes
 * interleave them, arguments streamed in pieces or only at the end), the
 * streamed answer, accumulated by the SDK's own stream helper, holds the same
 * content as the collected answer of the same call returned by `create`. A
 * client gets the same turn whether it streams or not, and a stream that fails
 * after its first byte raises the error in every SDK instead of ending as a
 * shorter answer.
 */
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import OpenAI from "openai";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { ModelEventBody } from "../../events.ts";
import { InboundError } from "../client-errors.ts";
import { blockEvents, textLikeBlock, toolCallBlock, type CallBlock } from "../../testing/call-blocks.ts";
import { ChatEncoder } from "./chat-encoder.ts";
import { MessagesEncoder } from "./messages-encoder.ts";
import { ResponsesEncoder } from "./responses-encoder.ts";
import type { EncoderContext, TurnEncoder } from "./turn-encoder.ts";

/** What an encoder wrote: enough of a ServerResponse for the encoders and http-answers.ts. */
class CapturedResponse {
  headersSent = false;
  contentType = "";
  body = "";

  writeHead(_status: number, headers: Record<string, string>): this {
    this.headersSent = true;
    this.contentType = headers["content-type"] ?? "";
    return this;
  }

  flushHeaders(): void {}

  write(chunk: string): boolean {
    this.body += chunk;
    return true;
  }

  end(chunk?: string): void {
    if (chunk !== undefined) this.body += chunk;
  }
}

/**
 * A call's events: text and thinking blocks one after another (as every route sends them), tool calls
 * started among them and left open while later blocks run, ending in any order (as chat routes end
 * them, all at finish_reason).
 */
const call = fc.array(fc.oneof(textLikeBlock(1), toolCallBlock()), { minLength: 1, maxLength: 5 }).chain((blocks) =>
  fc.tuple(fc.constant(blocks), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: blocks.length, maxLength: blocks.length })),
);

function eventsOf(blocks: readonly CallBlock[], toolEndKeys: readonly number[]): ModelEventBody[] {
  const events: ModelEventBody[] = [];
  const openTools: Array<{ end: ModelEventBody; key: number }> = [];
  blocks.forEach((block, index) => {
    const { start, deltas, end } = blockEvents(block, index);
    events.push(start, ...deltas);
    if (block.kind === "tool") openTools.push({ end, key: toolEndKeys[index] ?? 0 });
    else events.push(end);
  });
  for (const { end } of openTools.sort((a, b) => a.key - b.key)) events.push(end);
  return events;
}

function encoded(make: (ctx: EncoderContext) => TurnEncoder, events: readonly ModelEventBody[], stream: boolean, hasTools: boolean, failure?: InboundError): CapturedResponse {
  const res = new CapturedResponse();
  const encoder = make({ res: res as unknown as ServerResponse, stream, model: "bench-model", id: "0123abcd", created: 1_700_000_000, includeUsage: true });
  encoder.begin();
  for (const event of events) encoder.event(event);
  const usage = { inputTokens: 12n, outputTokens: 34n };
  encoder.finish(failure === undefined ? { kind: "completed", stop: hasTools ? "tool_use" : "stop", usage } : { kind: "failed", error: failure, usage });
  return res;
}

/** The call's answer as a streamed and as a collected client of `make`'s API gets it. */
function bothAnswers(make: (ctx: EncoderContext) => TurnEncoder, [blocks, keys]: readonly [readonly CallBlock[], readonly number[]]): { streamed: CapturedResponse; collected: CapturedResponse } {
  const events = eventsOf(blocks, keys);
  const hasTools = blocks.some((b) => b.kind === "tool");
  return { streamed: encoded(make, events, true, hasTools), collected: encoded(make, events, false, hasTools) };
}

/** A fetch that answers every request with what the encoder wrote. */
function answering(res: CapturedResponse): typeof fetch {
  return async () => new Response(res.body, { status: 200, headers: { "content-type": res.contentType } });
}

const anthropicWith = (res: CapturedResponse) => new Anthropic({ apiKey: "k", baseURL: "http://sdk.test", fetch: answering(res), maxRetries: 0 });
const openaiWith = (res: CapturedResponse) => new OpenAI({ apiKey: "k", baseURL: "http://sdk.test/v1", fetch: answering(res), maxRetries: 0 });

const RUNS = 150;

describe("client encoders read by the official SDKs (property)", () => {
  it("Anthropic Messages: the streamed answer accumulated by MessageStream equals the collected message", async () => {
    await fc.assert(
      fc.asyncProperty(call, async (scenario) => {
        const answers = bothAnswers((ctx) => new MessagesEncoder(ctx), scenario);
        const params = { model: "bench-model", max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };
        const streamed = await anthropicWith(answers.streamed).messages.stream(params).finalMessage();
        const collected = await anthropicWith(answers.collected).messages.create(params);
        expect(streamed.content).toEqual(collected.content);
        expect(streamed.stop_reason).toBe(collected.stop_reason);
        expect(streamed.usage.output_tokens).toBe(collected.usage.output_tokens);
      }),
      { numRuns: RUNS },
    );
  });

  it("OpenAI Chat Completions: the streamed answer accumulated by ChatCompletionStream equals the collected completion", async () => {
    await fc.assert(
      fc.asyncProperty(call, async (scenario) => {
        const answers = bothAnswers((ctx) => new ChatEncoder(ctx), scenario);
        const params = { model: "bench-model", messages: [{ role: "user" as const, content: "hi" }] };
        const streamed = await openaiWith(answers.streamed).chat.completions.stream(params).finalChatCompletion();
        const collected = await openaiWith(answers.collected).chat.completions.create(params);
        const [s, c] = [streamed.choices[0]!, collected.choices[0]!];
        expect(s.message.content ?? "").toBe(c.message.content ?? "");
        expect((s.message.tool_calls ?? []).map(functionCall)).toEqual((c.message.tool_calls ?? []).map(functionCall));
        expect(s.finish_reason).toBe(c.finish_reason);
      }),
      { numRuns: RUNS },
    );
  });

  it("OpenAI Responses: the streamed answer accumulated by ResponseStream equals the collected response", async () => {
    await fc.assert(
      fc.asyncProperty(call, async (scenario) => {
        const answers = bothAnswers((ctx) => new ResponsesEncoder(ctx), scenario);
        const params = { model: "bench-model", input: "hi" };
        const streamed = await openaiWith(answers.streamed).responses.stream(params).finalResponse();
        const collected = await openaiWith(answers.collected).responses.create(params);
        // finalResponse() adds its own parses (parsed, parsed_arguments); the items are otherwise the wire's.
        expect(streamed.output.map(withoutSdkParse)).toEqual(collected.output);
        expect(streamed.output_text).toBe(collected.output_text);
        expect(streamed.status).toBe(collected.status);
      }),
      { numRuns: RUNS },
    );
  });
});

/** Any prefix of a call's events, then an upstream failure: the stream ends in the client's error event. */
const failedCall = call.chain(([blocks, keys]) => {
  const events = eventsOf(blocks, keys);
  return fc.tuple(fc.constant(blocks), fc.constant(events), fc.integer({ min: 0, max: events.length }));
});

describe("client encoders: a failure after the first byte (property)", () => {
  const failure = new InboundError("upstream", "upstream stream broke off: connection reset");

  it("makes each SDK's stream helper raise the error instead of returning a partial answer", async () => {
    await fc.assert(
      fc.asyncProperty(failedCall, async ([blocks, events, cut]) => {
        const prefix = events.slice(0, cut);
        const hasTools = blocks.some((b) => b.kind === "tool");
        const anthropic = anthropicWith(encoded((ctx) => new MessagesEncoder(ctx), prefix, true, hasTools, failure));
        await expect(anthropic.messages.stream({ model: "bench-model", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage()).rejects.toThrow(failure.message);
        const chat = openaiWith(encoded((ctx) => new ChatEncoder(ctx), prefix, true, hasTools, failure));
        await expect(chat.chat.completions.stream({ model: "bench-model", messages: [{ role: "user", content: "hi" }] }).finalChatCompletion()).rejects.toThrow(failure.message);
        const responses = openaiWith(encoded((ctx) => new ResponsesEncoder(ctx), prefix, true, hasTools, failure));
        await expect(responses.responses.stream({ model: "bench-model", input: "hi" }).finalResponse()).rejects.toThrow(failure.message);
      }),
      { numRuns: RUNS },
    );
  });
});

function functionCall(call: OpenAI.ChatCompletionMessageToolCall): unknown {
  return call.type === "function" ? { id: call.id, name: call.function.name, arguments: call.function.arguments } : call;
}

/** A copy without the fields finalResponse() adds (`parsed` on text parts, `parsed_arguments` on calls). */
function withoutSdkParse(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSdkParse);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== "parsed" && key !== "parsed_arguments").map(([key, v]) => [key, withoutSdkParse(v)]));
}
