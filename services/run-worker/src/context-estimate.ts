/**
 * The context estimate of the next model call and the budget it must fit:
 * budget = window - reserve (a share of the window, default 10 %); the window
 * is ModelSpec.context_window (the client's context choice, else the model's
 * configured window). The estimate starts from the newest anchor (input
 * tokens the provider reported for a request over a prefix of this history)
 * and adds the tokens of the messages after that prefix; without an anchor,
 * the whole request (system prompt, tools, every message) is counted.
 * Pure: the counter is given.
 */
import type { Message, PromptSpec } from "@byok/contracts";
import type { TokenCounter } from "./token-count.ts";

/** Framing tokens per message (role, separators) that no text shows. */
const PER_MESSAGE_TOKENS = 4;
/** What one image costs, roughly (providers bill by pixels; history keeps no size). */
const IMAGE_TOKENS = 1_000;

export interface ContextAnchor {
  /** Messages of the history that the measured request covered. */
  readonly messageCount: number;
  readonly inputTokens: number;
}

export interface ContextBudget {
  readonly window: number;
  /** Tokens a request may use: window minus the reserve. */
  readonly budget: number;
}

/** Undefined when the window is unknown (no proactive compaction then). */
export function contextBudget(window: number | undefined, reservePercent: number): ContextBudget | undefined {
  if (window === undefined || window <= 0) return undefined;
  return { window, budget: window - Math.floor((window * reservePercent) / 100) };
}

/** The text a message puts in front of the model, as counted. */
export function messageText(message: Message): string {
  const body = message.body;
  switch (body.case) {
    case "user":
    case "assistant":
      return body.value.content
        .map((p) => {
          switch (p.part.case) {
            case "text":
            case "reasoning":
              return p.part.value.text;
            case "toolCall":
              return `${p.part.value.name} ${p.part.value.argumentsJson}`;
            default:
              return "";
          }
        })
        .join("\n");
    case "toolResult":
      return body.value.content;
    default:
      return "";
  }
}

function imageCount(message: Message): number {
  const body = message.body;
  return body.case === "user" ? body.value.content.filter((p) => p.part.case === "image").length : 0;
}

export function messageTokens(counter: TokenCounter, message: Message): number {
  return PER_MESSAGE_TOKENS + counter.count(messageText(message)) + imageCount(message) * IMAGE_TOKENS;
}

export function messagesTokens(counter: TokenCounter, messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += messageTokens(counter, message);
  return total;
}

/** The texts of a prompt spec as counted: the system text, then one per tool. */
export function promptTexts(prompt: PromptSpec | undefined): string[] {
  if (prompt === undefined) return [];
  return [prompt.systemText, ...prompt.tools.map((tool) => `${tool.name} ${tool.description} ${tool.parametersJson}`)];
}

export function promptTokens(counter: TokenCounter, prompt: PromptSpec | undefined): number {
  const [system, ...tools] = promptTexts(prompt);
  let total = system === undefined ? 0 : counter.count(system);
  for (const tool of tools) total += PER_MESSAGE_TOKENS + counter.count(tool);
  return total;
}

/** UTF-8 bytes of what the counter would count for a request (ratio calibration). */
export function requestBytes(prompt: PromptSpec | undefined, messages: readonly Message[]): number {
  let bytes = 0;
  for (const text of promptTexts(prompt)) bytes += Buffer.byteLength(text, "utf8");
  for (const message of messages) bytes += Buffer.byteLength(messageText(message), "utf8");
  return bytes;
}

/** Input tokens of a request over `history`: anchored when the anchor covers a prefix of it. */
export function estimateInputTokens(counter: TokenCounter, prompt: PromptSpec | undefined, history: readonly Message[], anchor: ContextAnchor | undefined): number {
  if (anchor !== undefined && anchor.messageCount <= history.length) {
    return anchor.inputTokens + messagesTokens(counter, history.slice(anchor.messageCount));
  }
  return promptTokens(counter, prompt) + messagesTokens(counter, history);
}
