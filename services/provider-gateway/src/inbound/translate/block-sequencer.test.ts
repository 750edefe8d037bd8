import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ModelEventBody } from "../../events.ts";
import { blockEvents, textLikeBlock, toolCallBlock, type CallBlock } from "../../testing/call-blocks.ts";
import { BlockSequencer, type WireBlock } from "./block-sequencer.ts";

function run(events: ModelEventBody[]): string[] {
  const out: string[] = [];
  const sequencer = new BlockSequencer({
    open: (b) => out.push(`open ${b.kind === "tool" ? b.callId : b.kind}`),
    delta: (t) => out.push(`+${t}`),
    close: (args) => out.push(`close${args === undefined ? "" : ` ${args}`}`),
  });
  for (const event of events) sequencer.event(event);
  sequencer.flush();
  return out;
}

const start = (index: number, callId: string): ModelEventBody => ({ case: "toolCallStart", value: { index, callId, name: "f" } });
const args = (index: number, delta: string): ModelEventBody => ({ case: "toolCallArgsDelta", value: { index, delta } });
const end = (index: number, argumentsJson: string): ModelEventBody => ({ case: "toolCallEnd", value: { index, argumentsJson } });

describe("BlockSequencer", () => {
  it("closes a call with complete arguments early when the next one starts (chat parallel calls)", () => {
    expect(run([start(0, "a"), args(0, '{"p":'), args(0, "1}"), start(1, "b"), args(1, "{}"), end(0, '{"p":1}'), end(1, "{}")])).toEqual([
      "open a",
      '+{"p":',
      "+1}",
      'close {"p":1}',
      "open b",
      "+{}",
      "close {}",
    ]);
  });

  it("holds a block back while the call on the wire is incomplete, then sends it", () => {
    expect(run([start(0, "a"), args(0, '{"p":'), start(1, "b"), args(1, "{}"), args(0, "1}"), end(0, '{"p":1}'), end(1, "{}")])).toEqual([
      "open a",
      '+{"p":',
      "+1}",
      'close {"p":1}',
      "open b",
      "+{}",
      "close {}",
    ]);
  });

  it("sends the rest of final arguments that were not streamed (Responses .done, empty arguments)", () => {
    expect(run([start(0, "a"), end(0, '{"x":true}'), start(1, "b"), end(1, "{}")])).toEqual(["open a", '+{"x":true}', 'close {"x":true}', "open b", "+{}", "close {}"]);
  });

  it("at the end drops a waiting call that never ended (cut by the output limit) and closes the one on the wire", () => {
    expect(run([start(0, "a"), args(0, '{"x":'), start(1, "b"), args(1, '{"y"')])).toEqual(["open a", '+{"x":', 'close {"x":']);
  });
});

/*
 * The property: whatever the interleaving of a model call's
 * blocks (tool calls left open while later blocks run, as chat routes do;
 * arguments streamed in pieces, or only in the end event as Responses routes
 * do), what goes on the wire is one block after another, in the order the
 * blocks started, with every text and thinking delta, and every tool call's
 * argument deltas adding up to the arguments it is closed with: a client that
 * accumulates the deltas (the official SDKs do) sees the same call the
 * gateway ends with.
 */

/** A block of the call, and whether its end event came (a call cut short leaves blocks open). */
type BlockSpec = CallBlock & { readonly ended: boolean };

interface WireRecord {
  readonly block: WireBlock;
  readonly deltas: string[];
  closedWith: string | undefined;
  closed: boolean;
}

const blockSpec = fc.tuple(fc.oneof(textLikeBlock(), toolCallBlock()), fc.boolean()).map(([block, ended]): BlockSpec => ({ ...block, ended }));

/** Each block's events in order (start, deltas, end if it ended), interleaved across blocks by random keys. */
const scenario = fc.array(blockSpec, { minLength: 1, maxLength: 5 }).chain((blocks) =>
  fc.tuple(
    fc.constant(blocks),
    fc.tuple(...blocks.map((b) => fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1 + b.pieces.length + (b.ended ? 1 : 0), maxLength: 1 + b.pieces.length + (b.ended ? 1 : 0) }))),
  ),
);

function eventsOf(blocks: readonly BlockSpec[], keys: readonly (readonly number[])[]): ModelEventBody[] {
  const keyed: Array<{ key: number; block: number; event: ModelEventBody }> = [];
  blocks.forEach((b, index) => {
    const { start, deltas, end } = blockEvents(b, index);
    const own = b.ended ? [start, ...deltas, end] : [start, ...deltas];
    const sorted = [...(keys[index] ?? [])].sort((x, y) => x - y);
    own.forEach((event, i) => keyed.push({ key: sorted[i] ?? 0, block: index, event }));
  });
  // Stable: equal keys keep block order, and a block's own events keep theirs (its keys are sorted).
  return keyed.sort((x, y) => x.key - y.key || x.block - y.block).map((k) => k.event);
}

function wireOf(events: readonly ModelEventBody[]): { records: WireRecord[]; violations: string[] } {
  const records: WireRecord[] = [];
  const violations: string[] = [];
  let open: WireRecord | undefined;
  const sequencer = new BlockSequencer({
    open: (block) => {
      if (open !== undefined) violations.push("a block opened while another was open");
      open = { block, deltas: [], closedWith: undefined, closed: false };
      records.push(open);
    },
    delta: (text) => {
      if (open === undefined) violations.push("a delta outside a block");
      else open.deltas.push(text);
    },
    close: (argumentsJson) => {
      if (open === undefined) violations.push("a close without an open block");
      else {
        open.closedWith = argumentsJson;
        open.closed = true;
      }
      open = undefined;
    },
  });
  for (const event of events) sequencer.event(event);
  sequencer.flush();
  if (open !== undefined) violations.push("a block left open after flush");
  return { records, violations };
}

const blockNameOf = (block: WireBlock): string => (block.kind === "tool" ? block.callId : block.kind);

describe("BlockSequencer (property)", () => {
  it("sends blocks one after another, in start order, with all of their content", () => {
    fc.assert(
      fc.property(scenario, ([blocks, keys]) => {
        const events = eventsOf(blocks, keys);
        const { records, violations } = wireOf(events);
        expect(violations).toEqual([]);

        // Which block each wire block is: tool calls by call id, text and thinking by their start order.
        const startOrder = events.filter((e) => e.case === "textStart" || e.case === "thinkingStart" || e.case === "toolCallStart").map((e) => e.value.index ?? 0);
        const unmatched = [...startOrder];
        const wireIndexes = records.map((r) => {
          const i = unmatched.findIndex((index) => {
            const b = blocks[index]!;
            return r.block.kind === "tool" ? b.kind === "tool" && r.block.callId === `call_${index}` : b.kind === r.block.kind;
          });
          expect(i, `wire block ${blockNameOf(r.block)} matches no block started before it`).toBeGreaterThanOrEqual(0);
          return unmatched.splice(i, 1)[0]!;
        });
        // In start order, each block at most once.
        expect(wireIndexes).toEqual(startOrder.filter((index) => wireIndexes.includes(index)));

        for (const [index, b] of blocks.entries()) {
          const at = wireIndexes.indexOf(index);
          // Only a tool call that never ended may be left out (it was cut off and is never run).
          if (at < 0) {
            expect(b.kind === "tool" && !b.ended, `block ${index} (${b.kind}, ended ${b.ended}) is missing`).toBe(true);
            continue;
          }
          const record = records[at]!;
          const sent = record.deltas.join("");
          if (b.kind !== "tool") {
            expect(sent).toBe(b.pieces.join(""));
            expect(record.closedWith).toBeUndefined();
            continue;
          }
          // What a client accumulates from the deltas is what the call is closed with.
          expect(record.closedWith).toBe(sent);
          expect(sent).toBe(b.ended ? b.argumentsJson : b.pieces.join(""));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
