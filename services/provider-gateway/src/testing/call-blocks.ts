/**
 * For the property tests of the translated path (the block sequencer and the
 * client encoders): the blocks of a random model call, each as the deltas a
 * route would stream. A tool call's arguments are one JSON object, streamed
 * in pieces (chat and Anthropic routes), only in the end event (Responses
 * `.done`), or as a streamed prefix completed by the end event.
 */
import fc from "fast-check";
import type { ModelEventBody } from "../events.ts";

export interface CallBlock {
  readonly kind: "text" | "thinking" | "tool";
  /** The deltas, in order. */
  readonly pieces: readonly string[];
  /** A tool call's arguments as its end event carries them ("" for text and thinking). */
  readonly argumentsJson: string;
}

/** Cuts `text` at the given points (taken modulo its length) into non-empty pieces, keeping every character. */
export function cutText(text: string, points: readonly number[]): string[] {
  const at = [...new Set(points.map((p) => (text.length === 0 ? 0 : p % text.length)))].filter((p) => p > 0).sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of at) {
    pieces.push(text.slice(from, p));
    from = p;
  }
  pieces.push(text.slice(from));
  return pieces.filter((p) => p !== "");
}

/** A text or thinking block of 0 to 4 non-empty deltas (at least `minPieces`). */
export function textLikeBlock(minPieces = 0): fc.Arbitrary<CallBlock> {
  return fc.record({
    kind: fc.constantFrom<"text" | "thinking">("text", "thinking"),
    pieces: fc.array(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), { minLength: minPieces, maxLength: 4 }),
    argumentsJson: fc.constant(""),
  });
}

/** A tool call whose arguments arrive in one of the three ways a route sends them. */
export function toolCallBlock(): fc.Arbitrary<CallBlock> {
  return fc
    .record({
      args: fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null)), { maxKeys: 3 }),
      cuts: fc.array(fc.nat(), { maxLength: 4 }),
      arrival: fc.constantFrom("streamed", "at end", "prefix then end"),
    })
    .map(({ args, cuts, arrival }) => {
      const json = JSON.stringify(args);
      const pieces = arrival === "at end" ? [] : cutText(json, cuts);
      return { kind: "tool" as const, pieces: arrival === "prefix then end" ? pieces.slice(0, -1) : pieces, argumentsJson: json };
    });
}

/** The ModelEvents of block `index` of a call: its start, its deltas and its end (a tool call's end carries its arguments). */
export function blockEvents(block: CallBlock, index: number): { readonly start: ModelEventBody; readonly deltas: ModelEventBody[]; readonly end: ModelEventBody } {
  switch (block.kind) {
    case "tool":
      return {
        start: { case: "toolCallStart", value: { index, callId: `call_${index}`, name: `tool_${index}` } },
        deltas: block.pieces.map((delta) => ({ case: "toolCallArgsDelta", value: { index, delta } })),
        end: { case: "toolCallEnd", value: { index, argumentsJson: block.argumentsJson } },
      };
    case "text":
      return {
        start: { case: "textStart", value: { index } },
        deltas: block.pieces.map((text) => ({ case: "textDelta", value: { index, text } })),
        end: { case: "textEnd", value: { index } },
      };
    case "thinking":
      return {
        start: { case: "thinkingStart", value: { index } },
        deltas: block.pieces.map((text) => ({ case: "thinkingDelta", value: { index, text } })),
        end: { case: "thinkingEnd", value: { index } },
      };
  }
}
