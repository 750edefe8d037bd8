/**
 * What a recorded provider stream says, read straight from the fixture file
 * with the simplest possible rules (concatenate the deltas, take the last
 * usage, look at the terminal event), independent of the adapters' decoders.
 * Tests compare the adapters' ModelEvents with this.
 */
import { readFileSync } from "node:fs";
import type { ProviderKind } from "@byok/platform";

export interface FixtureExpectation {
  readonly outcome: "ok" | "failed";
  /** ModelFailureKind name when failed. */
  readonly failureKind: string | undefined;
  readonly stopReason: "stop" | "tool_use" | undefined;
  readonly text: string;
  readonly thinking: string;
  readonly toolCalls: Array<{ callId: string; name: string; arguments: unknown }>;
  readonly usage: Record<string, number> | null;
  /** Opaque items the replay state must carry, in order (reasoning items / thinking blocks / reasoning text). */
  readonly replayItems: unknown[];
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- fixture payloads are free-form JSON

/** The JSON payloads of a fixture (`data:` lines of .sse, lines of .jsonl), without [DONE]. */
export function fixturePayloads(file: string): Json[] {
  const text = readFileSync(file, "utf8");
  if (file.endsWith(".jsonl")) return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Json);
  const payloads: Json[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    if (data === "" || data.trim() === "[DONE]") continue;
    payloads.push(JSON.parse(data) as Json);
  }
  return payloads;
}

export function expectationFor(kind: ProviderKind, file: string): FixtureExpectation {
  const payloads = fixturePayloads(file);
  switch (kind) {
    case "openai-chat":
      return chatExpectation(payloads);
    case "openai-responses":
      return responsesExpectation(payloads);
    case "anthropic":
      return anthropicExpectation(payloads);
    default: {
      const never: never = kind;
      throw new Error(`unknown kind ${String(never)}`);
    }
  }
}

function compact(usage: Record<string, number | undefined>): Record<string, number> {
  return Object.fromEntries(Object.entries(usage).filter(([, v]) => v !== undefined)) as Record<string, number>;
}

function chatExpectation(payloads: Json[]): FixtureExpectation {
  let text = "";
  let thinking = "";
  let finish: string | undefined;
  let usage: Json | undefined;
  let errored: boolean | "overflow" = false;
  const calls = new Map<number, { callId: string; name: string; args: string }>();
  for (const p of payloads) {
    if (p["error"]) errored = p["error"].code === "context_length_exceeded" ? "overflow" : true;
    if (p["usage"]) usage = p["usage"];
    for (const choice of p["choices"] ?? []) {
      const delta = choice.delta ?? {};
      text += delta.content ?? "";
      thinking += delta.reasoning_content ?? delta.reasoning ?? "";
      for (const fragment of delta.tool_calls ?? []) {
        const call = calls.get(fragment.index) ?? { callId: fragment.id, name: fragment.function?.name, args: "" };
        call.args += fragment.function?.arguments ?? "";
        calls.set(fragment.index, call);
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  const toolCalls = [...calls.values()].map((c) => ({ callId: c.callId, name: c.name, arguments: JSON.parse(c.args === "" ? "{}" : c.args) as unknown }));
  const failureKind = errored === "overflow" ? "CONTEXT_OVERFLOW" : errored ? "PROVIDER_ERROR" : finish === undefined ? "TRUNCATED" : finish === "length" ? "LENGTH" : finish === "content_filter" ? "REFUSAL" : undefined;
  return {
    outcome: failureKind === undefined ? "ok" : "failed",
    failureKind,
    stopReason: failureKind === undefined ? (toolCalls.length > 0 ? "tool_use" : "stop") : undefined,
    text,
    thinking,
    toolCalls: failureKind === undefined ? toolCalls : [],
    usage:
      usage === undefined
        ? null
        : compact({
            inputTokens: usage["prompt_tokens"],
            outputTokens: usage["completion_tokens"],
            cacheReadTokens: usage["prompt_tokens_details"]?.cached_tokens ?? usage["prompt_cache_hit_tokens"],
            cacheWriteTokens: usage["prompt_tokens_details"]?.cache_write_tokens,
            reasoningTokens: usage["completion_tokens_details"]?.reasoning_tokens,
          }),
    replayItems: thinking === "" ? [] : [thinking],
  };
}

function responsesExpectation(payloads: Json[]): FixtureExpectation {
  let text = "";
  let thinking = "";
  const calls: Array<{ callId: string; name: string; args: string; done: string | undefined; itemId: string }> = [];
  let terminal: Json | undefined;
  let failed: boolean | "overflow" = false;
  for (const p of payloads) {
    switch (p["type"]) {
      case "response.output_text.delta":
        text += p["delta"];
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        thinking += p["delta"];
        break;
      case "response.output_item.added":
        if (p["item"].type === "function_call") calls.push({ callId: p["item"].call_id, name: p["item"].name, args: "", done: undefined, itemId: p["item"].id });
        break;
      case "response.function_call_arguments.delta": {
        const call = calls.find((c) => c.itemId === p["item_id"]);
        if (call) call.args += p["delta"];
        break;
      }
      case "response.function_call_arguments.done": {
        const call = calls.find((c) => c.itemId === p["item_id"]);
        if (call) call.done = p["arguments"];
        break;
      }
      case "error":
      case "response.failed":
        failed = (p["error"] ?? p["response"]?.error)?.code === "context_length_exceeded" ? "overflow" : true;
        break;
      case "response.completed":
      case "response.incomplete":
        terminal = p;
        break;
    }
  }
  const response: Json | undefined = terminal?.["response"];
  const failureKind = failed
    ? failed === "overflow"
      ? "CONTEXT_OVERFLOW"
      : "PROVIDER_ERROR"
    : terminal === undefined
      ? "TRUNCATED"
      : terminal["type"] === "response.incomplete"
        ? /max/i.test(response?.["incomplete_details"]?.reason ?? "")
          ? "LENGTH"
          : "INCOMPLETE"
        : undefined;
  const toolCalls = calls.map((c) => ({ callId: c.callId, name: c.name, arguments: JSON.parse(c.done ?? c.args) as unknown }));
  const usage: Json | undefined = response?.["usage"] ?? undefined;
  return {
    outcome: failureKind === undefined ? "ok" : "failed",
    failureKind,
    stopReason: failureKind === undefined ? (toolCalls.length > 0 ? "tool_use" : "stop") : undefined,
    text,
    thinking,
    toolCalls: failureKind === undefined ? toolCalls : [],
    usage:
      usage === undefined || usage === null
        ? null
        : compact({
            inputTokens: usage["input_tokens"],
            outputTokens: usage["output_tokens"],
            cacheReadTokens: usage["input_tokens_details"]?.cached_tokens,
            cacheWriteTokens: usage["input_tokens_details"]?.cache_write_tokens,
            reasoningTokens: usage["output_tokens_details"]?.reasoning_tokens,
          }),
    replayItems: ((response?.["output"] ?? []) as Json[]).filter((item) => item["type"] === "reasoning"),
  };
}

function anthropicExpectation(payloads: Json[]): FixtureExpectation {
  let text = "";
  let thinking = "";
  let usage: Json | undefined;
  let stopReason: string | undefined;
  let stopped = false;
  let errored: boolean | "overflow" = false;
  const blocks: Json[] = [];
  for (const p of payloads) {
    switch (p["type"]) {
      case "message_start":
        usage = { ...p["message"].usage };
        break;
      case "content_block_start":
        blocks[p["index"]] = { ...p["content_block"], partial: "" };
        break;
      case "content_block_delta": {
        const block = blocks[p["index"]] as Json;
        const delta = p["delta"];
        if (delta.type === "text_delta") text += delta.text;
        if (delta.type === "thinking_delta") {
          thinking += delta.thinking;
          block["thinking"] += delta.thinking;
        }
        if (delta.type === "signature_delta") block["signature"] += delta.signature;
        if (delta.type === "input_json_delta") block["partial"] += delta.partial_json;
        break;
      }
      case "message_delta":
        stopReason = p["delta"].stop_reason ?? stopReason;
        for (const [k, v] of Object.entries(p["usage"] ?? {})) if (v !== null) (usage as Json)[k] = v;
        break;
      case "message_stop":
        stopped = true;
        break;
      case "error":
        errored = /^prompt is too long/.test(p["error"]?.message ?? "") ? "overflow" : true;
        break;
    }
  }
  const failureKind = errored
    ? errored === "overflow"
      ? "CONTEXT_OVERFLOW"
      : "PROVIDER_ERROR"
    : !stopped
      ? "TRUNCATED"
      : stopReason === "end_turn" || stopReason === "stop_sequence" || stopReason === "tool_use"
        ? undefined
        : stopReason === "max_tokens"
          ? "LENGTH"
          : stopReason === "refusal"
            ? "REFUSAL"
            : "INCOMPLETE";
  const toolCalls = blocks
    .filter((b) => b["type"] === "tool_use")
    .map((b) => ({ callId: b["id"] as string, name: b["name"] as string, arguments: JSON.parse(b["partial"] === "" ? "{}" : b["partial"]) as unknown }));
  const u = usage ?? {};
  return {
    outcome: failureKind === undefined ? "ok" : "failed",
    failureKind,
    stopReason: failureKind === undefined ? (stopReason === "tool_use" ? "tool_use" : "stop") : undefined,
    text,
    thinking,
    toolCalls: failureKind === undefined ? toolCalls : [],
    usage:
      usage === undefined
        ? null
        : compact({
            inputTokens: u["input_tokens"] + (u["cache_creation_input_tokens"] ?? 0) + (u["cache_read_input_tokens"] ?? 0),
            outputTokens: u["output_tokens"],
            cacheReadTokens: u["cache_read_input_tokens"],
            cacheWriteTokens: u["cache_creation_input_tokens"],
            reasoningTokens: u["output_tokens_details"]?.thinking_tokens,
          }),
    replayItems: blocks
      .filter((b) => b["type"] === "thinking" || b["type"] === "redacted_thinking")
      .map((b) => (b["type"] === "thinking" ? { type: "thinking", thinking: b["thinking"], signature: b["signature"] } : { type: "redacted_thinking", data: b["data"] })),
  };
}
