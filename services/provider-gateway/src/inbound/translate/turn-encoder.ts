/**
 * The common shape of the three client encoders (chat-encoder.ts,
 * responses-encoder.ts, messages-encoder.ts): a model call's ModelEvents in,
 * the client's answer out, either streamed as that API's SSE events or
 * collected into its JSON answer. The translated call feeds the blocks as
 * they come (`event`) and decides the end itself (`finish`), after the
 * replay state was kept, so the client never sees the end of an answer
 * before the gateway can replay it.
 */
import type { ServerResponse } from "node:http";
import type { UsageInit } from "../../events.ts";
import type { ModelEventBody } from "../../events.ts";
import type { InboundError } from "../client-errors.ts";

/** How the answer ended, in the client's terms: a normal stop (incl. the output limit and refusals) or an error. */
export type TurnEnd =
  | { readonly kind: "completed"; readonly stop: "stop" | "tool_use" | "length" | "refusal"; readonly usage: UsageInit | undefined }
  | { readonly kind: "failed"; readonly error: InboundError; readonly usage: UsageInit | undefined };

export interface TurnEncoder {
  /** The call started upstream: a streamed answer sends its headers and opening events. */
  begin(): void;
  /** A block event (text, thinking, tool call); other events are not passed. */
  event(event: ModelEventBody): void;
  /** Streamed: the closing events (or the in-stream error) and the end. Collected: the JSON answer, or the error answer. */
  finish(end: TurnEnd): void;
}

export interface EncoderContext {
  readonly res: ServerResponse;
  readonly stream: boolean;
  /** The model name the client asked for. */
  readonly model: string;
  /** Hex id the encoders derive their answer and item ids from. */
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  /** Chat: the client asked for the usage chunk (stream_options.include_usage). */
  readonly includeUsage: boolean;
}

export function sseEvent(name: string | undefined, data: unknown): string {
  return `${name === undefined ? "" : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`;
}

export function tokenCount(value: bigint | undefined): number | undefined {
  return value === undefined ? undefined : Number(value);
}
