/**
 * What a compaction keeps, what it summarizes and what the summary call sees
 * (pure; no I/O). The history after a compaction is: the summary message, the
 * latest request-context message, then the tail: the newest `tailTurns` turns
 * (a turn starts at a message the member typed). A tail too large for the
 * budget keeps its turn's first message and then only its newest tool rounds
 * that fit (a round = an assistant message and the tool results after it, never
 * split). Everything else is summarized.
 *
 * The summary call's history is the summarized span rendered as plain
 * messages (tool calls and results as text, no reasoning or replay state, so
 * it needs no tools and no thinking on any endpoint), trimmed from the oldest
 * end to fit its budget at round boundaries (a previous summary is kept
 * first), and always ending with our request as a user message.
 */
import { create } from "@bufbuild/protobuf";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { messageText, messageTokens } from "./context-estimate.ts";
import type { TokenCounter } from "./token-count.ts";

export interface CompactionSettings {
  /** Turns of the tail kept verbatim (>= 1). */
  readonly tailTurns: number;
  /** Output tokens of the summary call. */
  readonly summaryMaxTokens: number;
}

export interface PlanInput {
  readonly history: readonly Message[];
  /** Tokens a request may use (the context budget). */
  readonly budget: number;
  /** Tokens of the run's system prompt and tools (they stay in front of the new history). */
  readonly promptTokens: number;
  /** Tokens of the summary call's own system prompt and request. */
  readonly summaryPromptTokens: number;
  readonly requestText: string;
  readonly counter: TokenCounter;
  readonly settings: CompactionSettings;
}

export type CompactionPlan =
  | {
      readonly kind: "plan";
      /** Indices into the history of the messages kept after the summary, in order. */
      readonly kept: readonly number[];
      readonly summarizedCount: number;
      /** The summary call's messages (ending with the request). */
      readonly summaryMessages: Message[];
      /** Tokens of the kept messages. */
      readonly keptTokens: number;
    }
  /** Everything is tail: a summary would replace nothing. */
  | { readonly kind: "nothing_to_summarize" };

const OMITTED_START = "[The beginning of the conversation is left out here; the summary covers only what follows.]";

export function planCompaction(input: PlanInput): CompactionPlan {
  const { history, counter, settings } = input;
  const tokens = history.map((m) => messageTokens(counter, m));
  const contextIndex = lastIndexWhere(history, (m) => userOrigin(m) === UserOrigin.CONTEXT);
  const turnStarts = history.flatMap((m, i) => (userOrigin(m) === UserOrigin.USER ? [i] : []));
  const tailStart = turnStarts.length === 0 ? history.length : (turnStarts[Math.max(0, turnStarts.length - settings.tailTurns)] as number);

  // The tail must leave room for the prompt, the context message and the summary.
  const contextTokens = contextIndex >= 0 && contextIndex < tailStart ? (tokens[contextIndex] as number) : 0;
  const tailRoom = input.budget - input.promptTokens - settings.summaryMaxTokens - contextTokens;
  const tail = boundedTail(history, tokens, tailStart, tailRoom);

  const keptSet = new Set(tail);
  if (contextIndex >= 0) keptSet.add(contextIndex);
  const kept = [...keptSet].sort((a, b) => a - b);
  const summarized = history.filter((_, i) => !keptSet.has(i));
  if (summarized.length === 0) return { kind: "nothing_to_summarize" };

  const summaryRoom = input.budget - settings.summaryMaxTokens - input.summaryPromptTokens;
  return {
    kind: "plan",
    kept,
    summarizedCount: summarized.length,
    summaryMessages: summaryHistory(summarized, counter, summaryRoom, input.requestText),
    keptTokens: kept.reduce((sum, i) => sum + (tokens[i] as number), 0),
  };
}

/** Indices of the tail: from `start`, or its first message plus the newest whole rounds that fit `room`. */
function boundedTail(history: readonly Message[], tokens: readonly number[], start: number, room: number): number[] {
  const all = range(start, history.length);
  if (sum(tokens, all) <= room || all.length <= 1) return all;
  const first = all[0] as number;
  const rounds = groups(history, first + 1, history.length);
  const keptRounds: number[][] = [];
  let used = tokens[first] as number;
  for (let g = rounds.length - 1; g >= 0; g--) {
    const group = rounds[g] as number[];
    const cost = sum(tokens, group);
    // The newest round stays even when it alone is over: the next call needs it.
    if (keptRounds.length > 0 && used + cost > room) break;
    keptRounds.unshift(group);
    used += cost;
  }
  return [first, ...keptRounds.flat()];
}

/** Message groups in [from, to) that may not be split: an assistant message with the tool results after it. */
function groups(history: readonly Message[], from: number, to: number): number[][] {
  const out: number[][] = [];
  for (let i = from; i < to; i++) {
    const body = history[i]?.body;
    const last = out.at(-1);
    if (body?.case === "toolResult" && last !== undefined) last.push(i);
    else out.push([i]);
  }
  return out;
}

/** The summarized span as plain messages, trimmed to `room` from the oldest end, ending with the request. */
function summaryHistory(span: readonly Message[], counter: TokenCounter, room: number, requestText: string): Message[] {
  const rendered = span.map(renderForSummary);
  const cost = rendered.map((m) => messageTokens(counter, m));
  const units = groups(span, 0, span.length);
  const previousSummary = userOrigin(span[0]) === UserOrigin.SUMMARY ? units.shift() : undefined;
  const picked: number[][] = [];
  let used = previousSummary === undefined ? 0 : sum(cost, previousSummary);
  for (let u = units.length - 1; u >= 0; u--) {
    const unit = units[u] as number[];
    const unitCost = sum(cost, unit);
    if (used + unitCost > room) {
      // Nothing picked yet: the newest unit goes in, cut to what is left.
      if (picked.length === 0) picked.unshift(unit.map((i) => -1 - i));
      break;
    }
    picked.unshift(unit);
    used += unitCost;
  }
  const out: Message[] = [];
  for (const i of [...(previousSummary ?? []), ...picked.flat()]) {
    if (i >= 0) out.push(rendered[i] as Message);
    else out.push(cutToFit(rendered[-1 - i] as Message, counter, Math.max(256, room - used)));
  }
  if (out.length > 0 && out[0]?.body.case !== "user") out.unshift(userTextMessage(OMITTED_START));
  out.push(userTextMessage(requestText));
  return out;
}

/** A history message as the summary call sees it: text only. */
export function renderForSummary(message: Message): Message {
  const body = message.body;
  switch (body.case) {
    case "user":
      return userTextMessage(body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : p.part.case === "image" ? "[image]" : "")).join("\n"));
    case "assistant": {
      const lines = body.value.content.flatMap((p) => {
        if (p.part.case === "text") return [p.part.value.text];
        if (p.part.case === "toolCall") return [`[tool call ${p.part.value.name} ${p.part.value.argumentsJson}]`];
        return [];
      });
      return create(MessageSchema, { body: { case: "assistant", value: { content: [{ part: { case: "text", value: { text: lines.join("\n") } } }] } } });
    }
    case "toolResult":
      return userTextMessage(`[tool result of ${body.value.toolName}${body.value.isError ? " (error)" : ""}]\n${body.value.content}`);
    default:
      return userTextMessage(messageText(message));
  }
}

function cutToFit(message: Message, counter: TokenCounter, room: number): Message {
  const text = messageText(message);
  const tokens = counter.count(text);
  if (tokens <= room) return message;
  // Keep the start and the end; the middle is cut in proportion.
  const keep = Math.max(200, Math.floor((text.length * room) / tokens / 2));
  const cut = `${text.slice(0, keep)}\n[... ${text.length - 2 * keep} characters left out ...]\n${text.slice(-keep)}`;
  return message.body.case === "assistant"
    ? create(MessageSchema, { body: { case: "assistant", value: { content: [{ part: { case: "text", value: { text: cut } } }] } } })
    : userTextMessage(cut);
}

function userTextMessage(text: string): Message {
  return create(MessageSchema, { body: { case: "user", value: { origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } });
}

function userOrigin(message: Message | undefined): UserOrigin | undefined {
  return message?.body.case === "user" ? message.body.value.origin : undefined;
}

function lastIndexWhere<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i] as T)) return i;
  return -1;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}

function sum(values: readonly number[], indices: readonly number[]): number {
  return indices.reduce((total, i) => total + (values[i] as number), 0);
}

const SUMMARY_OPEN = "<conversation_summary>\nThe earlier part of this conversation was replaced by this summary.\n\n";
const SUMMARY_CLOSE = "\n</conversation_summary>";

/** The summary message that opens a compacted history. */
export function summaryMessage(summary: string, sourceRevisionId: string): Message {
  const text = `${SUMMARY_OPEN}${summary.trim()}${SUMMARY_CLOSE}`;
  return create(MessageSchema, {
    body: { case: "user", value: { clientId: `summary:${sourceRevisionId}`, origin: UserOrigin.SUMMARY, content: [{ part: { case: "text", value: { text } } }] } },
  });
}

/** The summary a summary message carries (its text without the wrapping). */
export function summaryTextOf(message: Message | undefined): string {
  const text = message?.body.case === "user" ? message.body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("") : "";
  return text.startsWith(SUMMARY_OPEN) && text.endsWith(SUMMARY_CLOSE) ? text.slice(SUMMARY_OPEN.length, -SUMMARY_CLOSE.length) : text;
}
