/**
 * What an accepted ModelEvent stream said: its blocks by index (text and
 * thinking as their deltas, tool calls with their streamed and final
 * arguments) and, for a completed call, the assistant message model.proto
 * defines: one content part per non-empty block in index order, plus the
 * replay state. Callers keep that message as it is (the provider gateway
 * matches its replay state against the part order on the next call).
 *
 * Feed it only events ModelStreamChecker accepted: it trusts the order and
 * does not check it again.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  AssistantMessageSchema,
  ContentPartSchema,
  ToolCallPartSchema,
  type AssistantMessage,
  type ContentPart,
  type ReplayStateSchema,
  type ToolCallPart,
} from "@byok/contracts";
import type { StreamEvent } from "./stream-rules.ts";

export type AssembledBlock =
  | { readonly kind: "text" | "thinking"; readonly index: number; readonly text: string; readonly ended: boolean }
  | {
      readonly kind: "tool";
      readonly index: number;
      readonly callId: string;
      readonly name: string;
      /** The argument deltas so far. */
      readonly streamedArguments: string;
      /** The complete arguments of the tool call's end; undefined while it is open. */
      readonly argumentsJson: string | undefined;
    };

type FlowBlock = { kind: "text" | "thinking"; chunks: string[]; ended: boolean };
type ToolBlock = { kind: "tool"; callId: string; name: string; chunks: string[]; argumentsJson: string | undefined };

export type ReplayInit = MessageInitShape<typeof ReplayStateSchema>;

export interface AssembledAssistant {
  readonly message: AssistantMessage;
  readonly toolCalls: readonly ToolCallPart[];
}

export class ModelStreamAssembly {
  readonly #blocks = new Map<number, FlowBlock | ToolBlock>();

  add(event: StreamEvent): void {
    switch (event.case) {
      case "textStart":
      case "thinkingStart":
        this.#blocks.set(event.value.index ?? 0, { kind: event.case === "textStart" ? "text" : "thinking", chunks: [], ended: false });
        return;
      case "textDelta":
      case "thinkingDelta":
        this.#blocks.get(event.value.index ?? 0)?.chunks.push(event.value.text ?? "");
        return;
      case "textEnd":
      case "thinkingEnd": {
        const block = this.#blocks.get(event.value.index ?? 0);
        if (block?.kind === "text" || block?.kind === "thinking") block.ended = true;
        return;
      }
      case "toolCallStart":
        this.#blocks.set(event.value.index ?? 0, { kind: "tool", callId: event.value.callId ?? "", name: event.value.name ?? "", chunks: [], argumentsJson: undefined });
        return;
      case "toolCallArgsDelta":
        this.#blocks.get(event.value.index ?? 0)?.chunks.push(event.value.delta ?? "");
        return;
      case "toolCallEnd": {
        const block = this.#blocks.get(event.value.index ?? 0);
        if (block?.kind === "tool") block.argumentsJson = event.value.argumentsJson ?? "";
        return;
      }
      default:
        return;
    }
  }

  /** Every block so far, in index order. */
  blocks(): AssembledBlock[] {
    return this.#ordered().map(([index, block]) =>
      block.kind === "tool"
        ? { kind: "tool", index, callId: block.callId, name: block.name, streamedArguments: block.chunks.join(""), argumentsJson: block.argumentsJson }
        : { kind: block.kind, index, text: block.chunks.join(""), ended: block.ended },
    );
  }

  /** The text (or thinking) streamed so far, blocks in index order: diagnostics only, never history. */
  partial(kind: "text" | "thinking"): string {
    const texts: string[] = [];
    for (const [, block] of this.#ordered()) if (block.kind === kind) texts.push(block.chunks.join(""));
    return texts.join("");
  }

  /** The assistant message of a completed call: one part per non-empty block, in index order, plus the replay state. */
  assistantMessage(replay: ReplayInit | undefined): AssembledAssistant {
    const parts: ContentPart[] = [];
    const toolCalls: ToolCallPart[] = [];
    for (const [, block] of this.#ordered()) {
      if (block.kind === "tool") {
        const call = create(ToolCallPartSchema, { callId: block.callId, name: block.name, argumentsJson: block.argumentsJson ?? "{}" });
        toolCalls.push(call);
        parts.push(create(ContentPartSchema, { part: { case: "toolCall", value: call } }));
        continue;
      }
      // An empty text or thinking block carries nothing the model said.
      const text = block.chunks.join("");
      if (text === "") continue;
      parts.push(create(ContentPartSchema, { part: block.kind === "text" ? { case: "text", value: { text } } : { case: "reasoning", value: { text } } }));
    }
    const message = create(AssistantMessageSchema, { content: parts, ...(replay === undefined ? {} : { replay }) });
    return { message, toolCalls };
  }

  #ordered(): Array<[number, FlowBlock | ToolBlock]> {
    return [...this.#blocks.entries()].sort(([a], [b]) => a - b);
  }
}
