/**
 * Replay layout: where the opaque, endpoint-only items of an assistant turn
 * (Responses reasoning items, Anthropic thinking blocks) sat between the
 * visible text and tool calls. An adapter records the layout in its replay
 * state when the call completes; on the next call it merges the layout with
 * the message's visible parts (text and tool calls in order; reasoning parts
 * are the visible copy of opaque items and are skipped) to rebuild the turn
 * exactly as the endpoint produced it.
 *
 * If the visible parts do not line up with the layout (different number of
 * texts, other call ids), the replay state does not belong to this content
 * and the merge returns undefined: the caller projects the visible parts
 * alone, deterministically.
 */
import type { ContentPart, ToolCallPart } from "@byok/contracts";

export type LayoutSlot<Opaque, TextMeta = never> =
  | { readonly kind: "opaque"; readonly value: Opaque }
  | { readonly kind: "text"; readonly meta?: TextMeta }
  | { readonly kind: "tool_call"; readonly callId: string };

export type MergedPart<Opaque, TextMeta = never> =
  | { readonly kind: "opaque"; readonly value: Opaque }
  | { readonly kind: "text"; readonly text: string; readonly meta?: TextMeta }
  | { readonly kind: "tool_call"; readonly call: ToolCallPart };

export type VisiblePart = { readonly kind: "text"; readonly text: string } | { readonly kind: "tool_call"; readonly call: ToolCallPart };

/** The visible parts of an assistant message, in order (reasoning parts skipped). */
export function visibleParts(content: readonly ContentPart[]): VisiblePart[] {
  const parts: VisiblePart[] = [];
  for (const part of content) {
    if (part.part.case === "text") parts.push({ kind: "text", text: part.part.value.text });
    else if (part.part.case === "toolCall") parts.push({ kind: "tool_call", call: part.part.value });
  }
  return parts;
}

export function mergeLayout<Opaque, TextMeta = never>(
  layout: ReadonlyArray<LayoutSlot<Opaque, TextMeta>>,
  content: readonly ContentPart[],
): Array<MergedPart<Opaque, TextMeta>> | undefined {
  const visible = visibleParts(content);
  const merged: Array<MergedPart<Opaque, TextMeta>> = [];
  let next = 0;
  for (const slot of layout) {
    if (slot.kind === "opaque") {
      merged.push(slot);
      continue;
    }
    const part = visible[next++];
    if (part === undefined) return undefined;
    if (slot.kind === "text") {
      if (part.kind !== "text") return undefined;
      merged.push(slot.meta === undefined ? part : { ...part, meta: slot.meta });
      continue;
    }
    if (part.kind !== "tool_call" || part.call.callId !== slot.callId) return undefined;
    merged.push(part);
  }
  return next === visible.length ? merged : undefined;
}
