/**
 * openai-responses replay state: the turn's output items in their original
 * order as a layout (replay-layout.ts): every reasoning item exactly as the
 * terminal response snapshot gave it (id, summary, encrypted_content, ...),
 * and placeholders for the visible parts: message texts (with the message
 * they belong to and its `phase`) and function calls (by call_id). The next
 * request rebuilds the items from it, since requests are stateless
 * (store:false, no previous_response_id).
 */
import { z } from "zod";
import type { LayoutSlot } from "../replay-layout.ts";

export const responsesTextMetaSchema = z.object({ message: z.number().int().nonnegative(), phase: z.string().optional() });
export type ResponsesTextMeta = z.infer<typeof responsesTextMetaSchema>;

/** A reasoning item as the endpoint produced it (kept verbatim). */
export type ReasoningItem = Record<string, unknown>;

const slotSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("opaque"), value: z.record(z.string(), z.unknown()) }),
  z.object({ kind: z.literal("text"), meta: responsesTextMetaSchema.optional() }),
  z.object({ kind: z.literal("tool_call"), callId: z.string() }),
]);

export const responsesReplaySchema = z.object({ v: z.literal(1), layout: z.array(slotSchema) });

export interface ResponsesReplay {
  v: 1;
  layout: Array<LayoutSlot<ReasoningItem, ResponsesTextMeta>>;
}
