/**
 * anthropic replay state: the turn's thinking and redacted_thinking blocks,
 * byte for byte (thinking text and signature, or the opaque data), placed in
 * a layout between the visible text and tool_use blocks (replay-layout.ts).
 * The next request puts them back unmodified and in their original order, as
 * the API requires for an assistant turn that continues a tool loop. Only the
 * route that produced them gets them (signatures verify only there).
 */
import { z } from "zod";
import type { LayoutSlot } from "../replay-layout.ts";

const thinkingBlockSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() }),
  z.object({ type: z.literal("redacted_thinking"), data: z.string() }),
]);
export type ThinkingBlock = z.infer<typeof thinkingBlockSchema>;

const slotSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("opaque"), value: thinkingBlockSchema }),
  z.object({ kind: z.literal("text") }),
  z.object({ kind: z.literal("tool_call"), callId: z.string() }),
]);

export const anthropicReplaySchema = z.object({ v: z.literal(1), layout: z.array(slotSchema) });

export interface AnthropicReplay {
  v: 1;
  layout: Array<LayoutSlot<ThinkingBlock>>;
}
